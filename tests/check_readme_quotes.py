#!/usr/bin/env python3
"""Checks that the output the root README quotes is what the tool prints.

usage: check_readme_quotes.py README.md SCHEDLAB_BINARY

Every ```sh block of one `./build/schedlab run ...` command that is followed
by a plain ``` block is re-run (from the README's directory, with the given
binary, stderr merged into stdout as `--log` writes there; a `| grep ...`
tail is run by the shell too); each quoted line must appear in its output.
Exit 1 naming the command and the first line missing.
"""
import os
import re
import subprocess
import sys


def quoted_runs(text):
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
    for (lang, body), (next_lang, next_body) in zip(blocks, blocks[1:]):
        lines = [l for l in body.splitlines() if l.strip()]
        if lang == "sh" and len(lines) == 1 and lines[0].startswith("./build/schedlab run ") and next_lang == "":
            yield lines[0], [l.rstrip() for l in next_body.splitlines() if l.strip()]


def main():
    readme, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    root = os.path.dirname(os.path.abspath(readme))
    with open(readme) as f:
        runs = list(quoted_runs(f.read()))
    if not runs:
        print("check_readme_quotes: no quoted run found", file=sys.stderr)
        return 1
    for command, quoted in runs:
        shell = command.replace("./build/schedlab", binary, 1)
        if " | " in shell:
            head, tail = shell.split(" | ", 1)
            shell = f"{head.replace(' 2>&1', '')} 2>&1 | {tail}"
        else:
            shell += " 2>&1"
        out = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=root, capture_output=True, text=True)
        printed = {l.rstrip() for l in out.stdout.splitlines()}
        for line in quoted:
            if line not in printed:
                print(f"check_readme_quotes: `{command}` does not print:\n{line}", file=sys.stderr)
                return 1
    print(f"check_readme_quotes: {len(runs)} quoted runs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
