"""URL converters for the annotator's pages and API."""

from django.urls import register_converter


class DatabaseIdConverter:
    """A database id: at most 18 digits, so that no URL can overflow a 64-bit column.

    Django's ``int`` takes any number of digits, and an id past 2**63 makes the
    database driver raise instead of finding nothing.
    """

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


# Registered once, when the URL modules import this one to name it in their paths.
DBID = "dbid"
register_converter(DatabaseIdConverter, DBID)
