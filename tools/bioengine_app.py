"""The deployments of a BioEngine app, read from its source with Python's ast.

    python3 bioengine_app.py APP_DIR module:Class

Starts at the manifest's entry class and follows its __init__ parameters'
type hints to the other @bioengine.app classes of the app, as BioEngine's
introspection does (bioengine/apps/bootstrap.py:82-281 at aicell-lab/bioengine
03b490c), depth first, each class once. Nothing is imported or run: each
decorator keyword's value is read with ast.literal_eval, arithmetic on numeric
literals folded (memory_mb=4 * 1024), and one that is not a literal (a call, a
name) is listed as not read. Prints one JSON object:

  {"deployments": [{"module", "class", "file", "line", "decorator",
                    "kwargs": {name: value}, "lines": {name: line},
                    "not_read": [{"name", "line", "text"}], "calls": [class]}]}
or {"error": {"file", "line", "message"}} for a source it cannot read.
`vramsim import bioengine` runs it and maps the result (docs/import.md).
"""
import ast
import json
import os
import sys

DECORATORS = {("bioengine", "app"): "bioengine.app"}


class SourceError(Exception):
    def __init__(self, file, line, message):
        super().__init__(message)
        self.file, self.line, self.message = file, line, message


def module_file(app_dir, module):
    base = os.path.join(app_dir, *module.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


class Module:
    def __init__(self, app_dir, name, path):
        self.name, self.path = name, path
        self.rel = os.path.relpath(path, app_dir)
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
            self.tree = ast.parse(source, filename=self.rel)
        except SyntaxError as e:
            raise SourceError(self.rel, e.lineno or 0, "invalid Python: " + str(e.msg))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise SourceError(self.rel, 0, "cannot read: " + str(e))
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        # Names bound by imports: local name -> (module, attribute or None).
        self.imports = {}
        for n in self.tree.body:
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                for a in n.names:
                    self.imports[a.asname or a.name] = (n.module, a.name)
            elif isinstance(n, ast.Import):
                for a in n.names:
                    self.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)

    def decorator_name(self, node):
        """'bioengine.app' for @bioengine.app or @app imported from bioengine."""
        if isinstance(node, ast.Call):
            node = node.func
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = self.imports.get(node.value.id, (node.value.id, None))
            return DECORATORS.get((target[0], node.attr))
        if isinstance(node, ast.Name) and node.id in self.imports:
            return DECORATORS.get(self.imports[node.id])
        return None


ARITHMETIC = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b}


def fold(node):
    """A literal, or arithmetic on numeric literals (4 * 1024): its value."""
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        a, b = fold(node.left), fold(node.right)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            raise ValueError("not numbers")
        if abs(a) > 1e15 or abs(b) > 1e15:
            raise ValueError("too large")
        return ARITHMETIC[type(node.op)](a, b)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        a, b = fold(node.left), fold(node.right)
        if not (isinstance(a, int) and isinstance(b, int)) or abs(a) > 1024 or not 0 <= b <= 64:
            raise ValueError("a power vramsim does not fold")
        if abs(a ** b) > 2 ** 53:
            raise ValueError("too large")
        return a ** b
    if isinstance(node, ast.Dict):
        return {fold(k): fold(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [fold(e) for e in node.elts]
    return ast.literal_eval(node)


def literal(node):
    value = fold(node)
    if isinstance(value, tuple):
        value = list(value)
    json.dumps(value, allow_nan=False)  # refuses sets, bytes, inf and nan
    return value


class Reader:
    def __init__(self, app_dir):
        self.app_dir = app_dir
        self.modules = {}
        self.records = {}
        self.order = []

    def module(self, name):
        if name not in self.modules:
            path = module_file(self.app_dir, name)
            self.modules[name] = Module(self.app_dir, name, path) if path else None
        return self.modules[name]

    def resolve(self, mod, annotation):
        """The (module, class) an __init__ parameter's type hint names, or None."""
        node = annotation
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Name):
            if node.id in mod.classes:
                return mod.name, node.id
            target = mod.imports.get(node.id)
            if target and target[1]:
                return target
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            target = mod.imports.get(node.value.id)
            if target and target[1] is None:
                return target[0], node.attr
        return None

    def visit(self, module_name, class_name, from_file, from_line):
        key = (module_name, class_name)
        if key in self.records:
            return self.records[key]
        mod = self.module(module_name)
        if mod is None:
            raise SourceError(from_file, from_line, "no module %s in the app (expected %s.py)" %
                              (module_name, module_name.replace(".", "/")))
        cls = mod.classes.get(class_name)
        if cls is None:
            raise SourceError(mod.rel, 0, "no class %s in %s" % (class_name, mod.rel))
        record = {"module": module_name, "class": class_name, "file": mod.rel, "line": cls.lineno,
                  "decorator": None, "kwargs": {}, "lines": {}, "not_read": [], "calls": []}
        for d in cls.decorator_list:
            name = mod.decorator_name(d)
            if not name:
                continue
            record["decorator"] = name
            record["line"] = d.lineno
            if isinstance(d, ast.Call):
                for a in d.args:
                    record["not_read"].append({"name": "(positional)", "line": a.lineno, "text": ast.unparse(a)})
                for kw in d.keywords:
                    if kw.arg is None:
                        record["not_read"].append({"name": "**", "line": kw.value.lineno,
                                                   "text": "**" + ast.unparse(kw.value)})
                        continue
                    record["lines"][kw.arg] = kw.value.lineno
                    try:
                        record["kwargs"][kw.arg] = literal(kw.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, ZeroDivisionError, OverflowError):
                        record["not_read"].append({"name": kw.arg, "line": kw.value.lineno,
                                                   "text": ast.unparse(kw.value)})
        self.records[key] = record
        self.order.append(record)
        if record["decorator"] is None:
            return record
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                args = (item.args.posonlyargs + item.args.args)[1:] + item.args.kwonlyargs  # past self
                for a in args:
                    if a.annotation is None:
                        continue
                    target = self.resolve(mod, a.annotation)
                    if not target or self.module(target[0]) is None:
                        continue
                    if target[1] not in self.module(target[0]).classes:
                        continue
                    child = self.visit(target[0], target[1], mod.rel, a.lineno)
                    if child["decorator"]:
                        record["calls"].append(child["class"])
        return record


def main(argv):
    if len(argv) != 3 or ":" not in argv[2]:
        print("usage: bioengine_app.py APP_DIR module:Class", file=sys.stderr)
        return 2
    app_dir, entry = argv[1], argv[2]
    module_name, class_name = entry.split(":", 1)
    reader = Reader(app_dir)
    try:
        reader.visit(module_name, class_name, "manifest.yaml", 0)
        out = {"deployments": [r for r in reader.order if r["decorator"] or r is reader.order[0]]}
    except SourceError as e:
        out = {"error": {"file": e.file, "line": e.line, "message": e.message}}
    except RecursionError:
        out = {"error": {"file": "", "line": 0, "message": "the source nests too deeply to read"}}
    sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
