"""The JSON API under ``/api/v1/``: thin DRF views over the annotation services."""
