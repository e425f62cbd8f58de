#!/usr/bin/env bash
# Regenerates the README's accuracy table from `moesim validate --markdown` (between the validation markers).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >/dev/null
table=$(build/moesim validate --markdown)
python3 - "$table" <<'PY'
import re, sys
table = sys.argv[1]
text = open("README.md").read()
begin, end = "<!-- validation:begin -->", "<!-- validation:end -->"
if begin not in text or end not in text:
    sys.exit("README.md lacks the validation markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open("README.md", "w").write(head + begin + "\n" + table.strip() + "\n" + end + tail)
PY
echo "README.md validation table updated"
