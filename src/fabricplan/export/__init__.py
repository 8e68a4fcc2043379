"""The files a build team loads into its tools, written from a designed fabric, and the check of
a built fabric against its cut sheet (``verify-cabling``)."""
