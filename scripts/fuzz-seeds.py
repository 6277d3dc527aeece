#!/usr/bin/env python3
"""Writes the seed corpus of a fuzz target (docs/Hardening.md) into a folder.

pipeline: every split of every .mlir file under test/ and examples/, each
with the options of one of its file's amp-pipeline RUN lines (all of them,
in turn), or a few option sets for files the pipeline does not run on, as
the first line `// <options>`.
policy: the JSON policy files of the repository and the JSON examples of
docs/Policies.md.
"""
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Options for files whose RUN lines do not run the pipeline: the levels,
# both types, each scaling mode and data parallelism.
OPTION_SETS = ["", "dtype=bf16", "level=O2", "level=O3", "level=O1 policy=tf",
               "scaling=static init-scale=256", "data-parallel=mpi",
               "policy=tensor-cores-only unknown-ops=infer"]
PIPELINE_RUN = re.compile(r'amp-pipeline(?:="([^"]*)"|=(\S+)|\s)')


def pipeline_seeds():
    files = sorted(p for d in ("test", "examples")
                   for p in (ROOT / d).rglob("*.mlir"))
    for index, path in enumerate(files):
        text = path.read_text(errors="replace")
        options = []
        for match in PIPELINE_RUN.finditer(text):
            value = match.group(1) or match.group(2) or ""
            # Options that name files are not fuzzed (amp-pipeline-fuzzer).
            if "%" not in value and value not in options:
                options.append(value)
        if not options:
            options = [OPTION_SETS[index % len(OPTION_SETS)]]
        chunks = re.split(r"^// -----\s*$", text, flags=re.M)
        for chunk_index, chunk in enumerate(chunks):
            body = "\n".join(line for line in chunk.splitlines()
                             if not line.lstrip().startswith("// RUN"))
            yield "// " + options[chunk_index % len(options)] + "\n" + body


def policy_seeds():
    for path in sorted(ROOT.rglob("*.json")):
        if "build" not in path.relative_to(ROOT).parts[0]:
            yield path.read_text(errors="replace")
    docs = (ROOT / "docs" / "Policies.md").read_text()
    yield from re.findall(r"```json\n(.*?)```", docs, flags=re.S)


def main():
    target, out = sys.argv[1], pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    seeds = {"pipeline": pipeline_seeds, "policy": policy_seeds}[target]()
    count = 0
    for seed in seeds:
        data = seed.encode()
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
        count += 1
    print(f"fuzz-seeds: {count} {target} seeds in {out}")


if __name__ == "__main__":
    main()
