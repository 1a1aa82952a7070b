#!/usr/bin/env python3
"""Docs that run: the command blocks of a Markdown file that claim an output
are run, each from a fresh folder, and compared with what the file shows.

A block is marked by an HTML comment on the line before its fence:

  <!-- docs-run -->            before a ```sh block: each command (a line,
                               with its `\\` continuations, or a loop) must
                               exit 0, or N where its comment says `# exit N`;
                               one whose comment says `needs NAME[,NAME]`
                               reads a public trace and runs only with
                               VRAMSIM_DOCS_TRACES=1 and where
                               `tools/fetch-traces --locate NAME` finds it
                               (a full trace under the sanitizers takes
                               minutes); else it is skipped, and said so.
  <!-- docs-run -->            before a block whose commands start with `$ `
                               (a transcript): each command's output must be
                               the lines shown after it, up to the next `$ `.
  <!-- docs-run: COMMAND -->   before any other block: COMMAND's output
                               (stdout and stderr) must be the block.

The fresh folder holds a link to every top-level entry of the source tree
(`scenarios`, `tools`, ...) and `build` links to the build folder given, so
the commands run as written from the source tree; `vramsim` is on PATH and
`build/python` on PYTHONPATH. Whatever a command writes stays in the folder,
which is removed afterwards. Trailing blanks and leading or trailing empty
lines are not compared.

  docs_run.py --source DIR --build DIR FILE.md [--update]

--update writes each compared block's output back into FILE.md (the file is
its own golden). Exit 0 when every block matches, 1 with a message per block
that does not (naming FILE:LINE, the command and the difference), 2 for a
marker without a block.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^<!-- docs-run(?::\s*(.*?))?\s*-->\s*$")
EXIT = re.compile(r"#\s*exit (\d+)\b")
NEEDS = re.compile(r"#.*\bneeds ([a-z0-9-]+(?:,[a-z0-9-]+)*)")
TIMEOUT_S = 600


def fail_input(message):
    print(message, file=sys.stderr)
    sys.exit(2)


class Block:
    def __init__(self, marker_line, command, fence, start, end):
        self.marker_line = marker_line  # 1-based line of the marker
        self.command = command          # the marker's COMMAND, or None
        self.fence = fence              # the opening fence line (```sh)
        self.start = start              # index of the first body line
        self.end = end                  # index of the closing fence


def find_blocks(path, lines):
    blocks = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not lines[j].startswith("```"):
            fail_input(f"{path}:{i + 1}: a docs-run marker must be followed by a ``` block")
        k = j + 1
        while k < len(lines) and not lines[k].startswith("```"):
            k += 1
        if k >= len(lines):
            fail_input(f"{path}:{j + 1}: the block after the docs-run marker is not closed")
        blocks.append(Block(i + 1, m.group(1), lines[j], j + 1, k))
    return blocks


def normalise(text_lines):
    out = [l.rstrip() for l in text_lines]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


class Folder:
    """A fresh folder that looks like the source tree, with build linked."""

    def __init__(self, source, build):
        # ROOT/checkout is the source tree's stand-in; ROOT/shared links the
        # `shared` beside the source tree, where the scenarios find traces.
        self.root = tempfile.mkdtemp(prefix="vramsim-docs-")
        self.path = os.path.join(self.root, "checkout")
        os.mkdir(self.path)
        shared = os.path.join(os.path.dirname(source), "shared")
        if os.path.isdir(shared):
            os.symlink(shared, os.path.join(self.root, "shared"))
        for name in os.listdir(source):
            if name == ".git" or name == "build" or name.startswith("build-") or name == "runs":
                continue
            os.symlink(os.path.join(source, name), os.path.join(self.path, name))
        os.symlink(os.path.abspath(build), os.path.join(self.path, "build"))
        self.env = dict(os.environ)
        self.env["PATH"] = os.path.join(self.path, "build", "tools") + os.pathsep + self.env.get("PATH", "")
        self.env["PYTHONPATH"] = os.path.join(self.path, "build", "python")

    def run(self, command):
        r = subprocess.run(["bash", "-c", command], cwd=self.path, env=self.env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
        return r.returncode, r.stdout.decode("utf-8", "replace")

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def complete(command):
    """Whether bash reads `command` as whole (not cut inside a loop or quote)."""
    return subprocess.run(["bash", "-n", "-c", command], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def commands_of(body):
    """The commands of a sh block: a line, with its `\\` continuations and the
    lines a compound command (a loop) runs on to; comments kept."""
    out, cur, first = [], "", None
    for n, line in body:
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if first is None:
            first = n
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if not complete(cur):
            cur += "\n"
            continue
        out.append((first, cur))
        cur, first = "", None
    if cur:
        out.append((first, cur))
    return out


def trace_found(source, name):
    """Whether `tools/fetch-traces --locate NAME` finds the trace here."""
    return subprocess.run([os.path.join(source, "tools", "fetch-traces"), "--locate", name], cwd=source,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def difference(want, got):
    return "\n".join(difflib.unified_diff(want, got, "shown", "printed", lineterm="", n=1))


def check(path, source, build, update):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = find_blocks(path, lines)
    if not blocks:
        fail_input(f"{path}: no docs-run marker")
    failures = []
    replacements = []  # (start, end, new body lines)
    for b in blocks:
        body = lines[b.start:b.end]
        folder = Folder(source, build)
        try:
            if b.command is not None:
                _, out = folder.run(b.command)
                got, want = normalise(out.split("\n")), normalise(body)
                if got != want:
                    failures.append(f"{path}:{b.marker_line}: `{b.command}` printed other than the block shows:\n"
                                    + difference(want, got))
                    replacements.append((b.start, b.end, got))
            elif any(l.startswith("$ ") for l in body):
                new_body, differs = [], False
                steps = [i for i, l in enumerate(body) if l.startswith("$ ")]
                for s, i in enumerate(steps):
                    stop = steps[s + 1] if s + 1 < len(steps) else len(body)
                    command = body[i][2:]
                    _, out = folder.run(command)
                    got, want = normalise(out.split("\n")), normalise(body[i + 1:stop])
                    new_body += [body[i]] + got
                    if got != want:
                        differs = True
                        failures.append(f"{path}:{b.start + i + 1}: `{command}` printed other than the block "
                                        "shows:\n" + difference(want, got))
                if differs:
                    replacements.append((b.start, b.end, new_body))
            else:
                for n, command in commands_of([(b.start + i + 1, l) for i, l in enumerate(body)]):
                    needs = NEEDS.search(command)
                    if needs and os.environ.get("VRAMSIM_DOCS_TRACES") != "1":
                        print(f"{path}:{n}: skipped, reads the trace(s) {needs.group(1)} (VRAMSIM_DOCS_TRACES=1 runs it)")
                        continue
                    missing = [t for t in needs.group(1).split(",") if not trace_found(source, t)] if needs else []
                    if missing:
                        print(f"{path}:{n}: skipped, needs the trace(s) {', '.join(missing)} "
                              "(tools/fetch-traces NAME)")
                        continue
                    m = EXIT.search(command)
                    want = int(m.group(1)) if m else 0
                    rc, out = folder.run(command)
                    if rc != want:
                        tail = "\n".join(out.rstrip().split("\n")[-8:])
                        failures.append(f"{path}:{n}: `{command}` exited {rc}, the block says {want}; its last "
                                        f"lines:\n{tail}")
                        break  # the commands after it may need what it made
        except subprocess.TimeoutExpired as e:
            failures.append(f"{path}:{b.marker_line}: `{e.cmd[-1]}` ran past {TIMEOUT_S} s")
        finally:
            folder.close()
    if update and replacements:
        for start, end, new in sorted(replacements, reverse=True):
            lines[start:end] = new
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print(f"{path}: {len(replacements)} block(s) written from the output")
        return 0
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{path}: {len(blocks)} block(s) run, {len(failures)} differ")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True, help="the source tree")
    p.add_argument("--build", required=True, help="the build folder (tools/vramsim in it)")
    p.add_argument("--update", action="store_true", help="write the outputs into the file")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    a.source, a.build = os.path.abspath(a.source), os.path.abspath(a.build)
    if not os.path.isfile(os.path.join(a.build, "tools", "vramsim")):
        fail_input(f"--build {a.build}: expected tools/vramsim in it")
    rc = 0
    for f in a.files:
        rc = max(rc, check(f, a.source, a.build, a.update))
    return rc


if __name__ == "__main__":
    sys.exit(main())
