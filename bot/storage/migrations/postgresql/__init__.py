"""PostgreSQL migrations (a package so that setuptools ships the ``.sql`` files beside it)."""
