"""Pagination, the same everywhere: ``page_size`` (default 100, at most 1,000) and either

* a cursor (``?cursor=``) for the long lists that grow while someone reads them —
  trees and annotations — ordered by id, so a page never repeats or skips a row
  when rows are added; or
* a page number (``?page=``) for the short ones: datasets, projects, members, results.
"""

from __future__ import annotations

from rest_framework.pagination import CursorPagination, PageNumberPagination

PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


class PagePagination(PageNumberPagination):
    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE


class IdCursorPagination(CursorPagination):
    ordering = "id"
    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
