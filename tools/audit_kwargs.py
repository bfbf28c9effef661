#!/usr/bin/env python3
"""Audit keyword-argument names of ampgrad's pybind11 bindings against torch's.

For every public name of ``ampgrad.Tensor`` and ``ampgrad`` that is a pybind11 builtin, the
parameter names of each overload are read from the pybind11 docstring; torch's names come from
the aten schemas (``torch._C._jit_get_schemas_for_operator``) -- the python-arg-parser names are
the schema names, ``self`` being the tensor of a method and ``input`` for a torch.* function --
or, for torch names written in Python, from ``inspect.signature``.

A name is reported when some keyword of some torch overload (positional-or-keyword parameters
after self, and keyword-only ones; ``out`` is left aside: ampgrad adds it with a separate
overload, Note [out= overloads]) is accepted by no ampgrad overload.

Usage: PYTHONPATH=python python tools/audit_kwargs.py [-o /tmp/kwarg_audit.txt] [--python]
(--python also audits the ampgrad names written in Python, with inspect.signature.)
"""
import argparse
import inspect
import keyword
import os
import re
import subprocess
import sys

import torch

import ampgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_pybind(f):
    if type(f).__name__ in ("builtin_function_or_method", "instancemethod"):
        return True
    doc = getattr(f, "__doc__", None) or ""
    return bool(re.match(r"\w+\(self: ", doc))


def split_top(s):
    """Split a parameter list at the commas outside brackets and quotes."""
    out, depth, cur, q = [], 0, [], None
    for ch in s:
        if q:
            cur.append(ch)
            if ch == q:
                q = None
            continue
        if ch in "'\"":
            q = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def pybind_overloads(name, f):
    """[(params, has_varargs, has_varkw)] per overload; params: [(name, kind)] kind in pos/kw."""
    doc = f.__doc__ or ""
    sigs = []
    for line in doc.splitlines():
        m = re.match(r"^(?:\d+\. )?" + re.escape(name) + r"\((.*)\) -> .*$", line.strip())
        if m:
            sigs.append(m.group(1))
    if not sigs:  # a single signature without a return annotation
        m = re.match(re.escape(name) + r"\((.*)\)", doc.strip())
        if m and "Overloaded function" not in doc:
            sigs.append(m.group(1))
    res = []
    for s in sigs:
        params, va, vk, kw = [], False, False, False
        for p in split_top(s):
            if p == "*":
                kw = True
                continue
            if p == "/":
                continue
            if p.startswith("**"):
                vk = True
                continue
            if p.startswith("*"):
                va = True
                kw = True
                continue
            pname = p.split(":")[0].split("=")[0].strip()
            params.append((pname, "kw" if kw else "pos"))
        res.append((params, va, vk))
    return res


def ampgrad_overloads(name, f, method):
    ovs = pybind_overloads(getattr(f, "__name__", name), f)
    if method:  # drop self
        ovs = [([p for p in ps if p[0] != "self"] if ps and ps[0][0] == "self" else ps[1:], va, vk) for ps, va, vk in ovs]
    return ovs


def accepted(ovs):
    names = set()
    wild = False
    for ps, va, vk in ovs:
        pn = {p[0] for p in ps}
        if vk and pn == {"out"}:  # the out= overload: *args, out, **kwargs
            continue
        if vk:
            wild = True
        names |= pn
    return names, wild


def torch_schema_names(name, method):
    """list of overloads, each a list of (name, kwarg_only) after self, out args dropped."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + name)
    except Exception:
        schemas = []
    res = []
    for s in schemas:
        if s.overload_name.endswith("out") or s.overload_name.startswith("out") or any(a.is_out for a in s.arguments):
            continue
        args = list(s.arguments)
        if not any("Tensor" in str(a.type) for a in args):  # TorchScript scalar/list overloads
            continue
        if method:
            if not args or args[0].name != "self" or "Tensor" not in str(args[0].type):
                continue
        if method:
            if not args or args[0].name != "self":
                continue
            args = args[1:]
        names = [("input" if a.name == "self" else a.name, a.kwarg_only) for a in args]
        res.append(names)
    return res


def torch_python_names(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    res = []
    for i, p in enumerate(sig.parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        if p.name in ("self", "out"):
            continue
        res.append((p.name, p.kind == p.KEYWORD_ONLY))
    return [res]


_PYI = None


def torch_pyi():
    """{(method, name): [overload args]} from torch's generated stubs (the python-arg-parser
    signatures): torch/_C/_VariableFunctions.pyi (torch.*) and class TensorBase of
    torch/_C/__init__.pyi (Tensor methods)."""
    global _PYI
    if _PYI is not None:
        return _PYI
    import ast
    _PYI = {}
    d = os.path.join(os.path.dirname(torch.__file__), "_C")

    def add(method, fn):
        a = fn.args
        pos = a.args[1:] if method and a.args and a.args[0].arg == "self" else a.args
        ov = [(x.arg, False) for x in pos] + [(x.arg, True) for x in a.kwonlyargs]
        ov = [(n, k) for n, k in ov if n != "out"]
        _PYI.setdefault((method, fn.name), []).append(ov)

    for fname, method in (("_VariableFunctions.pyi", False), ("__init__.pyi", True)):
        try:
            tree = ast.parse(open(os.path.join(d, fname)).read())
        except (OSError, SyntaxError):
            continue
        if method:
            body = [n for c in tree.body if isinstance(c, ast.ClassDef) and c.name in ("TensorBase", "_TensorBase")
                    for n in c.body]
        else:
            body = tree.body
        for n in body:
            if isinstance(n, ast.FunctionDef):
                add(method, n)
    return _PYI


def torch_names(name, method):
    """torch's overloads for Tensor.<name> (method) or torch.<name>: the generated stubs first
    (the aten schemas also list TorchScript-only overloads such as mul.int(int a, int b)), then
    the aten schemas (overloads with a Tensor self / a Tensor argument), then inspect.signature
    for torch names written in Python."""
    owner = torch.Tensor if method else torch
    obj = getattr(owner, name, None)
    if obj is None:
        return None, "absent in torch"
    if type(obj).__name__ in ("method_descriptor", "builtin_function_or_method", "wrapper_descriptor"):
        ovs = torch_pyi().get((method, name))
        if ovs:
            return ovs, "pyi"
        ovs = torch_schema_names(name, method)
        if not ovs:
            return None, "no aten schema"
        return ovs, "aten"
    ovs = torch_python_names(obj)
    if ovs is None:
        return None, "no signature"
    return ovs, "python"


def torch_accepts(name, method, kw):
    """Ask torch whether it takes keyword `kw` (the stubs also list deprecated overloads whose
    python-arg-parser names differ, e.g. add(Tensor self, Number alpha, Tensor other)): call it
    with kw=<object> and read the TypeError. True/False, or None where the message cannot tell."""
    obj = getattr(torch.ones(2), name) if method else getattr(torch, name)
    try:
        obj(**{kw: object()})
    except Exception as e:  # noqa: BLE001 -- any failure is read
        msg = str(e)
    else:
        return True
    if ("unexpected keyword argument '%s'" % kw in msg or "takes no keyword arguments" in msg or
            re.search(r"unrecognized keyword arguments: .*\b%s\b" % re.escape(kw), msg)):
        return False
    if re.search(r"argument '%s' must be" % re.escape(kw), msg):
        return True
    if "expected one of" in msg or "but expected (" in msg:
        sigs = re.findall(r"^ \* \((.*)\)$", msg, re.M) or re.findall(r"but expected \((.*)\)", msg)
        names = set()
        for sg in sigs:
            for part in split_top(sg):
                part = part.split("=")[0].strip()
                if part and part != "*":
                    names.add(part.split()[-1])
        return kw in names
    m = re.search(r"missing \d+ required positional arguments?: (.*)", msg)
    if m and kw in re.findall(r"[\"'](\w+)[\"']", m.group(1)):
        return True
    return None


_grep_cache = {}


def binding_site(name, method):
    key = (name, method)
    if key in _grep_cache:
        return _grep_cache[key]
    bind = os.path.join(ROOT, "csrc", "bindings")
    pats = ['"%s"' % name]
    base = name[:-1] if name.endswith("_") else name
    if name.endswith("_"):
        pats += [r'AG_IP\(%s,' % re.escape(base), r'AG_BI\(%s,' % re.escape(base), r'#name "_"']
    pats += [r'\(%s,' % re.escape(base), r'"%s"' % re.escape(base)]
    site = "?"
    for pat in pats:
        try:
            out = subprocess.run(["grep", "-rnE", pat, bind], capture_output=True, text=True).stdout
        except Exception:
            out = ""
        lines = [l for l in out.splitlines() if "attr(" not in l or pat.startswith('"')]
        if lines:
            f, ln = lines[0].split(":", 2)[:2]
            site = "%s:%s" % (os.path.relpath(f, ROOT), ln)
            if pat == r'#name "_"' or pat.startswith(r"\("):
                site += " (macro)"
            break
    _grep_cache[key] = site
    return site


def audit(out_path, include_python=False):
    rows, skipped, checked, notes = [], [], 0, []
    for method, owner, aowner in ((True, "Tensor", ampgrad.Tensor), (False, "torch", ampgrad)):
        for name in sorted(dir(aowner)):
            if name.startswith("_"):
                continue
            f = getattr(aowner, name, None)
            pyb = is_pybind(f)
            if not pyb and not (include_python and callable(f) and not isinstance(f, type)):
                continue
            tov, src = torch_names(name, method)
            if tov is None:
                skipped.append("%s.%s: %s" % (owner, name, src))
                continue
            if pyb:
                aovs = ampgrad_overloads(name, f, method)
                acc, wild = accepted(aovs)
                anames = [[p[0] + ("*" if p[1] == "kw" else "") for p in ps] + (["*args"] if va else []) +
                          (["**kw"] if vk else []) for ps, va, vk in aovs]
            else:
                try:
                    sig = inspect.signature(f)
                except (TypeError, ValueError):
                    continue
                ps = [p for p in sig.parameters.values() if p.name != "self"]
                acc = {p.name for p in ps if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
                wild = any(p.kind == p.VAR_KEYWORD for p in ps)
                anames = [[p.name for p in ps]]
            checked += 1
            tnames = set()
            for ov in tov:
                tnames |= {n for n, _ in ov}
            # the stubs spell a Python keyword with a trailing underscore (from_); torch's parser
            # takes one or the other (Tensor.uniform_: from; torch.can_cast: from_)
            for n in [n for n in tnames if n.endswith("_") and keyword.iskeyword(n[:-1])]:
                if torch_accepts(name, method, n) is False and torch_accepts(name, method, n[:-1]):
                    tnames = (tnames - {n}) | {n[:-1]}
            missing = sorted(n for n in tnames if n not in acc)
            rejected = [n for n in missing if torch_accepts(name, method, n) is False]
            missing = [n for n in missing if n not in rejected]
            if rejected:
                notes.append("%s.%s: torch's stubs list %s, but torch's parser rejects it" % (
                    owner, name, ",".join(rejected)))
            if not missing:
                continue
            tdisp = sorted({"(" + ", ".join(n + ("*" if k else "") for n, k in ov) + ")" for ov in tov})
            rows.append(dict(name="%s.%s" % (owner, name), missing=missing, torch=tdisp, ampgrad=anames,
                             wild=wild, site=binding_site(name, method) if pyb else "python:" + (
                                 getattr(f, "__module__", "?") or "?"), pybind=pyb))
    with open(out_path, "w") as fh:
        fh.write("# kwarg audit: %d names checked, %d with torch keywords ampgrad does not accept\n" % (checked, len(rows)))
        fh.write("# columns: name | missing | torch overloads (* = kw-only) | ampgrad overloads | binding site\n")
        fh.write("# (**kw overloads: ampgrad may accept the name through **kwargs -- marked 'wild')\n")
        for r in sorted(rows, key=lambda r: (-len(r["missing"]), r["name"])):
            fh.write("%s | missing=%s | torch=%s | ampgrad=%s | %s%s\n" % (
                r["name"], ",".join(r["missing"]), " ".join(r["torch"]),
                " ".join("(" + ", ".join(a) + ")" for a in r["ampgrad"]), r["site"], " | wild" if r["wild"] else ""))
        fh.write("\n# stub names torch itself rejects, not counted (%d):\n" % len(notes))
        for s in notes:
            fh.write("#   %s\n" % s)
        fh.write("\n# not compared (%d):\n" % len(skipped))
        for s in skipped:
            fh.write("#   %s\n" % s)
    return rows, checked, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--out", default="/tmp/kwarg_audit.txt")
    ap.add_argument("--python", action="store_true", help="also audit ampgrad names written in Python")
    a = ap.parse_args()
    rows, checked, skipped = audit(a.out, a.python)
    print("checked %d names, %d with missing torch keywords, %d not comparable; report: %s" % (
        checked, len(rows), len(skipped), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
