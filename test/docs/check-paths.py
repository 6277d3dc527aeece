"""Checks that the files and links a page cites exist.

Usage: check-paths.py ROOT PAGE...: for each PAGE (relative to ROOT), every
Markdown link to a local file (relative to the page, without its #anchor)
and every `path` in backticks that starts with a top-level directory of ROOT
must exist. Prints one line per missing one, `page:line: path`, and exits 1
if there is any."""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"`([^`\s]+)`")


def cited_paths(root, page, text):
    tops = {name + "/" for name in os.listdir(root)
            if os.path.isdir(os.path.join(root, name))
            and not name.startswith(".") and name != "build"}
    for number, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if "://" not in target:
                yield number, os.path.normpath(os.path.join(os.path.dirname(page), target))
        for code in CODE.findall(line):
            # `lib/Runner/` or `lib/Pipelines/AmpPipeline.cpp`, not `a/b` or a glob
            if any(code.startswith(top) for top in tops) and not set("*<>{}") & set(code):
                yield number, code.rstrip(".,:;")


def main(root, pages):
    missing = 0
    for page in pages:
        with open(os.path.join(root, page), encoding="utf-8") as file:
            text = file.read()
        for number, path in cited_paths(root, page, text):
            if not os.path.exists(os.path.join(root, path)):
                print(f"{page}:{number}: {path}")
                missing += 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
