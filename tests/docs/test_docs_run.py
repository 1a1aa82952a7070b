#!/usr/bin/env python3
"""The docs-run harness on pages made here, with a stand-in `vramsim` (a
shell script) in a build folder of its own: a block that matches passes, one
that differs fails naming its line and the difference, --update writes the
output back (and the page then passes), a sh block's exit codes are checked
against its `# exit N` comments, a transcript compares each command's output,
each block runs in a fresh folder, and a marker without a block is an input
error (exit 2).

  test_docs_run.py PATH/TO/docs_run.py
"""
import os
import subprocess
import sys
import tempfile

HARNESS = sys.argv[1]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory(prefix="vramsim-docs-test-") as root:
    source = os.path.join(root, "src")
    build = os.path.join(root, "bld")
    os.makedirs(os.path.join(source, "scenarios"))
    os.makedirs(os.path.join(build, "tools"))
    with open(os.path.join(source, "scenarios", "a.txt"), "w") as f:
        f.write("alpha\n")
    fake = os.path.join(build, "tools", "vramsim")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = fail ]; then echo "went wrong" >&2; exit 3; fi\necho "vramsim $*"\n'
                'cat scenarios/a.txt\n')
    os.chmod(fake, 0o755)

    def page(name, text):
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(path, *extra):
        r = subprocess.run([sys.executable, HARNESS, "--source", source, "--build", build, path, *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={k: v for k, v in os.environ.items() if k != "VRAMSIM_DOCS_TRACES"})
        return r.returncode, r.stdout + r.stderr

    good = page("good.md", "Intro.\n\n<!-- docs-run: build/tools/vramsim run x -->\n```\nvramsim run x\nalpha\n```\n")
    rc, out = run(good)
    expect(rc == 0, f"a matching block passes: {rc} {out}")

    stale = page("stale.md", "Intro.\n\n<!-- docs-run: vramsim run y -->\n```\nvramsim run x\nalpha\n```\nEnd.\n")
    rc, out = run(stale)
    expect(rc == 1, f"a stale block fails: {rc}")
    expect("stale.md:3: `vramsim run y` printed other than the block shows" in out, out)
    expect("-vramsim run x\n+vramsim run y" in out, f"the difference is shown: {out}")
    rc, out = run(stale, "--update")
    expect(rc == 0, f"--update: {rc} {out}")
    with open(stale) as f:
        text = f.read()
    expect(text == "Intro.\n\n<!-- docs-run: vramsim run y -->\n```\nvramsim run y\nalpha\n```\nEnd.\n",
           f"--update writes the output into the block and nothing else: {text!r}")
    rc, out = run(stale)
    expect(rc == 0, f"the updated page passes: {out}")

    exits = page("exits.md", "<!-- docs-run -->\n```sh\nmkdir -p runs\nvramsim fail \\\n  now   # exit 3: says so\n"
                             "vramsim ok > runs/out.txt\n```\n")
    rc, out = run(exits)
    expect(rc == 0, f"exit codes as the comments say: {rc} {out}")
    wrong = page("wrong.md", "<!-- docs-run -->\n```sh\nvramsim ok\n\nvramsim fail\nvramsim ok\n```\n")
    rc, out = run(wrong)
    expect(rc == 1 and "wrong.md:5: `vramsim fail` exited 3, the block says 0" in out and "went wrong" in out, out)

    transcript = page("transcript.md", "<!-- docs-run -->\n```\n$ vramsim one\nvramsim one\nalpha\n"
                                       "$ vramsim two\nvramsim two\nbeta\n```\n")
    rc, out = run(transcript)
    expect(rc == 1 and "transcript.md:6: `vramsim two` printed other" in out and "-beta\n+alpha" in out, out)
    expect("transcript.md:3" not in out, f"the first command matched: {out}")

    # Each block in a fresh folder: what the first made, the second lacks.
    fresh = page("fresh.md", "<!-- docs-run -->\n```sh\nmkdir made\n```\n\n<!-- docs-run -->\n```sh\n"
                             "test -d made   # exit 1\ntest -e scenarios/a.txt\n```\n")
    rc, out = run(fresh)
    expect(rc == 0, f"fresh folders, the source tree linked: {out}")

    # A command that reads a trace runs only when asked to: skipped, and said so.
    traced = page("traced.md", "<!-- docs-run -->\n```sh\nvramsim fail   # needs gentd26: reads it\n```\n")
    rc, out = run(traced)
    expect(rc == 0 and "traced.md:3: skipped, reads the trace(s) gentd26" in out, f"{rc} {out}")

    lone = page("lone.md", "<!-- docs-run: vramsim x -->\nno block\n")
    rc, out = run(lone)
    expect(rc == 2 and "lone.md:1: a docs-run marker must be followed by a ``` block" in out, f"{rc} {out}")

    expect(not os.path.exists(os.path.join(source, "made")) and not os.path.exists(os.path.join(source, "runs")),
           "nothing written into the source tree")

for f in failures:
    print("FAILED:", f)
print(f"docs-run harness: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
