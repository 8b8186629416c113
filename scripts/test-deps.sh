#!/bin/sh
# Optional test dependencies: tests/suite/xlsx.rs opens the workbook with Python's openpyxl
# (the test is skipped, loudly, when it is missing).
set -e
python3 -c "import openpyxl" 2>/dev/null || python3 -m pip install --quiet openpyxl
