"""The admin of accounts: Django's own, with usernames that may not look like another's.

Django's add form refuses a username that differs from another only by case; these forms
also refuse look-alikes (``r\\u043e\\u043et``, its o's Cyrillic, beside ``root``) on adding and on renaming,
with the reason on the field (``annotation.projects.usernames``). The unique index on the
usernames' keys refuses them in any case; this says why, on the form.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from annotation.projects.usernames import username_check


def _unlike_others(form: AdminUserCreationForm | UserChangeForm, username: str) -> str:
    username_check(username, exclude=form.instance.pk)
    return username


class UsernameCreationForm(AdminUserCreationForm):
    def clean_username(self) -> str:
        return _unlike_others(self, super().clean_username())


class UsernameChangeForm(UserChangeForm):
    def clean_username(self) -> str:
        return _unlike_others(self, self.cleaned_data["username"])


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    add_form = UsernameCreationForm
    form = UsernameChangeForm
