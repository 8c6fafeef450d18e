#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/unit/test_nlspec.py - the YAML netlink spec against the schema and
the UAPI header.

Documentation/netlink/specs/mpip.yaml describes the mpip generic netlink
family in the kernel's spec format.  This test checks, on the host:

 - that it validates against the kernel's genetlink-legacy schema
   (Documentation/netlink/genetlink-legacy.yaml, from Linux 6.12), with
   python3-jsonschema;
 - that every name it refers to (nested attribute sets, enums, structs,
   the attributes of subsets and of operations) is defined in it;
 - that kernel/uapi/mpip.h and the spec define the same things: the
   family name and version, and for every enum of the header the same
   names with the same values in the same order (commands, every attribute
   set with its __..._MAX count, the enums of definitions), the ..._MAX
   defines, struct mpip_rule_range, and no enum in the spec that the
   header lacks.  Names follow the rules of the kernel's ynl-gen-c.py:
   the upper-cased name-prefix and name, '-' as '_';
 - that every range check of the module's attribute policies
   (kernel/netlink.c: NLA_POLICY_MIN, _MAX, _RANGE, _FULL_RANGE) is the
   spec's "checks" of that attribute, and the spec checks no attribute the
   policies do not;
 - that the kernel's own spec parser, tools/net/ynl/lib (SpecFamily, what
   YnlFamily builds on before it opens a socket), reads it.  The library
   comes from YNL_DIR=.../tools/net/ynl, else from build/ynl (where
   tools/deps.sh unpacks linux-source-6.12's), else from a Debian
   linux-source package (6.3 or later), unpacked into a scratch directory;
   with none of them the test fails.  Nothing is sent to a kernel (the
   selftest test_ynl does that, with ynl's CLI).

Output is KTAP; the last line is "nlspec: N passed, N failed, N skipped";
exit status 1 if a test failed.

  /usr/bin/python3 tests/unit/test_nlspec.py
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "Documentation/netlink/specs/mpip.yaml")
SCHEMA = os.path.join(ROOT, "Documentation/netlink/genetlink-legacy.yaml")
HEADER = os.path.join(ROOT, "kernel/uapi/mpip.h")
POLICY = os.path.join(ROOT, "kernel/netlink.c")
# where the policies' named constants (MPIP_WEIGHT_MAX ...) are defined
POLICY_HEADERS = ("kernel/mpip.h", "kernel/core/path.h", "kernel/core/reorder.h",
                  "kernel/core/rule.h")

results = []  # (ok, name, directive)


def report(ok, name, why=None, skip=None):
    if why:
        for line in str(why).splitlines():
            print("# " + line)
    if skip is not None:
        results.append((True, name, "SKIP " + skip))
    else:
        results.append((ok, name, None))
    n = len(results)
    tail = " # SKIP " + skip if skip is not None else ""
    print(("ok" if ok else "not ok") + " %d %s%s" % (n, name, tail), flush=True)


def c_upper(name):
    return name.upper().replace("-", "_")


def c_lower(name):
    return name.lower().replace("-", "_")


# --- the header -----------------------------------------------------------

def parse_header(path):
    """enums {name: [(entry, value)...]}, defines {name: text}, structs
    {name: [(type, member)...]} of a C header (no macros in values)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    enums = {}
    for m in re.finditer(r"\benum\s+(\w+)\s*\{(.*?)\}\s*;", text, re.S):
        entries, val = [], 0
        for item in m.group(2).split(","):
            item = item.strip()
            if not item:
                continue
            e = re.fullmatch(r"(\w+)(?:\s*=\s*(\w+))?", item)
            if not e:
                raise ValueError("enum %s: cannot read '%s'" % (m.group(1), item))
            if e.group(2) is not None:
                val = int(e.group(2), 0)
            entries.append((e.group(1), val))
            val += 1
        enums[m.group(1)] = entries
    defines = {}
    for m in re.finditer(r"^#define[ \t]+(\w+)[ \t]+([^\n]+)$", text, re.M):
        defines[m.group(1)] = m.group(2).strip()
    structs = {}
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{(.*?)\}\s*;", text, re.S):
        structs[m.group(1)] = [tuple(x.split()) for x in m.group(2).replace("\n", " ").split(";")
                               if x.strip()]
    return enums, defines, structs


# --- what the spec says the header has ------------------------------------

def spec_enums(spec):
    """{C enum name: [(entry, value)...]} and {define: text} that the spec
    renders, by ynl-gen-c.py's rules (max-by-define: the count is the last
    entry of the enum, the max a define)."""
    fam = c_lower(spec["name"])
    by_define = spec.get("max-by-define", False)
    enums, defines = {}, {}

    for d in spec.get("definitions", []):
        if d["type"] not in ("enum", "flags"):
            continue
        pfx = d.get("name-prefix", "%s-%s-" % (spec["name"], d["name"]))
        ename = c_lower(d["enum-name"]) if d.get("enum-name") else "%s_%s" % (fam, c_lower(d["name"]))
        val = d.get("value-start", 0)
        entries = []
        for e in d["entries"]:
            if isinstance(e, str):
                e = {"name": e}
            if "value" in e:
                val = e["value"]
            entries.append((c_upper(pfx + str(e["name"])), val))
            val += 1
        enums[ename] = entries

    def with_max(ename, entries, pfx, cnt_name, max_name):
        cnt = c_upper(cnt_name or "__%sMAX" % c_upper(pfx))
        mx = c_upper(max_name or "%sMAX" % c_upper(pfx))
        last = entries[-1][1] if entries else 0
        entries = entries + [(cnt, last + 1)]
        if by_define:
            defines[mx] = "(%s - 1)" % cnt
        else:
            entries.append((mx, last))
        enums[ename] = entries

    for s in spec["attribute-sets"]:
        if "subset-of" in s:
            continue
        pfx = s.get("name-prefix", "%s-a-%s-" % (spec["name"], s["name"]))
        val, entries = 1, []
        for a in s["attributes"]:
            if "value" in a:
                val = a["value"]
            entries.append((c_upper(a.get("name-prefix", pfx) + str(a["name"])), val))
            val += 1
        ename = c_lower(s["enum-name"]) if s.get("enum-name") else None
        with_max(ename, entries, pfx, s.get("attr-cnt-name"), s.get("attr-max-name"))

    ops = spec["operations"]
    pfx = ops.get("name-prefix", spec["name"] + "-cmd-")
    val, entries = 1, []
    for o in ops["list"]:
        if "value" in o:
            val = o["value"]
        entries.append((c_upper(pfx + o["name"]), val))
        val += 1
    with_max(c_lower(ops["enum-name"]) if ops.get("enum-name") else None, entries, pfx,
             spec.get("cmd-cnt-name"), spec.get("cmd-max-name"))
    return enums, defines


# --- the module's policies ------------------------------------------------

def policy_checks(henums):
    """{attribute's C name: {"min": N, "max": N}} of the range checks in
    kernel/netlink.c's nla_policy arrays."""
    with open(POLICY, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    names = {e: v for entries in henums.values() for e, v in entries}
    for h in POLICY_HEADERS:
        with open(os.path.join(ROOT, h), encoding="utf-8") as f:
            for m in re.finditer(r"^#define[ \t]+(\w+)[ \t]+(\d+)\b", f.read(), re.M):
                names.setdefault(m.group(1), int(m.group(2)))

    def value(v):
        v = v.strip()
        return int(v, 0) if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", v) else names[v]

    ranges = {}
    for m in re.finditer(r"netlink_range_validation\s+(\w+)\s*=\s*\{(.*?)\}", text, re.S):
        fields = dict(re.findall(r"\.(min|max)\s*=\s*([\w-]+)", m.group(2)))
        ranges[m.group(1)] = {k: value(v) for k, v in fields.items()}
    checks = {}
    for m in re.finditer(r"struct\s+nla_policy\s+\w+\[[^]]*\]\s*=\s*\{(.*?)\n\}", text, re.S):
        for e in re.finditer(r"\[(\w+)\]\s*=\s*(.*?)(?=,\s*\[|,?\s*$)", m.group(1), re.S):
            attr, expr = e.group(1), " ".join(e.group(2).split())
            k = re.fullmatch(r"NLA_POLICY_(MIN|MAX|RANGE|FULL_RANGE)\((\w+),\s*(.*)\)", expr)
            if not k:
                continue
            args = [a.strip() for a in k.group(3).split(",")]
            if k.group(1) == "FULL_RANGE":
                checks[attr] = dict(ranges[args[0].lstrip("&")])
            elif k.group(1) == "RANGE":
                checks[attr] = {"min": value(args[0]), "max": value(args[1])}
            else:
                checks[attr] = {k.group(1).lower(): value(args[0])}
    return checks


def t_policy(spec, henums):
    """The spec's checks are the policies' range checks, attribute for
    attribute."""
    have = policy_checks(henums)
    if not have:
        return "no range check found in %s" % POLICY
    want = {}
    for s in spec["attribute-sets"]:
        if "subset-of" in s:
            continue
        pfx = s.get("name-prefix", "%s-a-%s-" % (spec["name"], s["name"]))
        for a in s["attributes"]:
            c = {k: v for k, v in a.get("checks", {}).items() if k in ("min", "max")}
            if c:
                want[c_upper(a.get("name-prefix", pfx) + str(a["name"]))] = c
    errs = []
    for attr in sorted(set(have) | set(want)):
        # a policy's min of 0 on an unsigned type checks nothing
        h = {k: v for k, v in have.get(attr, {}).items() if not (k == "min" and v == 0)}
        w = {k: v for k, v in want.get(attr, {}).items() if not (k == "min" and v == 0)}
        if h != w:
            errs.append("%s: the policy checks %s, the spec %s" % (attr, h or "nothing", w or "nothing"))
    return "\n".join(errs) or None


# --- tests ----------------------------------------------------------------

def load_spec():
    import yaml
    with open(SPEC, encoding="utf-8") as f:
        return yaml.safe_load(f)


def t_schema(spec):
    try:
        import jsonschema
        import yaml
    except ImportError as e:
        return "%s (apt-get install python3-jsonschema python3-yaml; tools/deps.sh)" % e
    with open(SCHEMA, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    try:
        jsonschema.validate(spec, schema)
    except jsonschema.ValidationError as e:
        return "%s at %s" % (e.message, "/".join(str(p) for p in e.absolute_path))
    return None


def t_references(spec):
    errs = []
    sets = {s["name"]: s for s in spec["attribute-sets"]}
    defs = {d["name"]: d for d in spec.get("definitions", [])}
    for s in spec["attribute-sets"]:
        names = [a["name"] for a in s["attributes"]]
        if len(set(names)) != len(names):
            errs.append("set %s: an attribute name twice" % s["name"])
        if "subset-of" in s:
            parent = sets.get(s["subset-of"])
            if not parent:
                errs.append("set %s: subset of unknown %s" % (s["name"], s["subset-of"]))
                continue
            pnames = {a["name"] for a in parent["attributes"]}
            errs += ["set %s: %s is not in %s" % (s["name"], n, parent["name"])
                     for n in names if n not in pnames]
            continue
        for a in s["attributes"]:
            where = "%s.%s" % (s["name"], a["name"])
            if a["type"] == "nest" and a.get("nested-attributes") not in sets:
                errs.append("%s: nested-attributes %s" % (where, a.get("nested-attributes")))
            if "enum" in a and defs.get(a["enum"], {}).get("type") not in ("enum", "flags"):
                errs.append("%s: enum %s is not defined" % (where, a["enum"]))
            if "struct" in a and defs.get(a["struct"], {}).get("type") != "struct":
                errs.append("%s: struct %s is not defined" % (where, a["struct"]))
    for o in spec["operations"]["list"]:
        aset = o.get("attribute-set")
        if aset is None:
            if "do" in o or "dump" in o:
                errs.append("op %s: no attribute-set" % o["name"])
            continue
        if aset not in sets:
            errs.append("op %s: attribute-set %s" % (o["name"], aset))
            continue
        have = {a["name"] for a in sets[aset]["attributes"]}
        for mode in ("do", "dump"):
            for part in ("request", "reply"):
                for n in (o.get(mode) or {}).get(part, {}).get("attributes", []):
                    if n not in have:
                        errs.append("op %s %s %s: %s is not in %s" % (o["name"], mode, part, n, aset))
    return "\n".join(errs) or None


def t_family(spec, defines):
    errs = []
    fam_key = spec.get("c-family-name", spec["name"] + "_FAMILY_NAME")
    ver_key = spec.get("c-version-name", spec["name"] + "_FAMILY_VERSION")
    if defines.get(c_upper(fam_key)) != '"%s"' % spec["name"]:
        errs.append("%s is %s in the header, the spec's name is %s"
                    % (fam_key, defines.get(c_upper(fam_key)), spec["name"]))
    if defines.get(c_upper(ver_key)) != str(spec.get("version", 1)):
        errs.append("%s is %s in the header, the spec's version %s"
                    % (ver_key, defines.get(c_upper(ver_key)), spec.get("version", 1)))
    return "\n".join(errs) or None


def t_enum(name, have, want):
    if have == want:
        return None
    hd, wd = dict(have), dict(want)
    errs = ["%s = %d in the header, not in the spec" % (n, v) for n, v in have if n not in wd]
    errs += ["%s = %d in the spec, not in the header" % (n, v) for n, v in want if n not in hd]
    errs += ["%s: %d in the header, %d in the spec" % (n, v, wd[n]) for n, v in have
             if n in wd and wd[n] != v]
    if not errs:
        errs.append("the same entries in another order")
    return "enum %s:\n" % name + "\n".join(errs)


def t_struct(spec, structs):
    errs = []
    fam = c_lower(spec["name"])
    for d in spec.get("definitions", []):
        if d["type"] != "struct":
            continue
        cname = c_lower(d.get("enum-name") or "%s_%s" % (fam, d["name"]))
        want = [("__" + m["type"], c_lower(m["name"])) for m in d["members"]]
        if structs.get(cname) != want:
            errs.append("struct %s: header %s, spec %s" % (cname, structs.get(cname), want))
    for s in structs:
        if not any(d["type"] == "struct" and
                   c_lower(d.get("enum-name") or "%s_%s" % (fam, d["name"])) == s
                   for d in spec.get("definitions", [])):
            errs.append("struct %s is not in the spec" % s)
    return "\n".join(errs) or None


def find_ynl(tmp):
    """A tools/net/ynl directory with lib/nlspec.py, or (None, why)."""
    d = os.environ.get("YNL_DIR")
    if d:
        if os.path.isfile(os.path.join(d, "lib/nlspec.py")):
            return d, None
        return None, "YNL_DIR=%s has no lib/nlspec.py" % d
    d = os.path.join(ROOT, "build/ynl/tools/net/ynl")
    if os.path.isfile(os.path.join(d, "lib/nlspec.py")):
        return d, None

    def version(p):
        m = re.search(r"linux-source-(\d+)\.(\d+)", p)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)

    tars = sorted(glob.glob("/usr/src/linux-source-*.tar.xz"), key=version, reverse=True)
    for t in tars:
        if version(t) < (6, 3):
            continue
        top = os.path.basename(t)[:-len(".tar.xz")]
        r = subprocess.run(["tar", "-xJf", t, "-C", tmp, "--wildcards",
                            top + "/tools/net/ynl/lib/*.py"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        d = os.path.join(tmp, top, "tools/net/ynl")
        if r.returncode == 0 and os.path.isfile(os.path.join(d, "lib/nlspec.py")):
            return d, None
    return None, "no /usr/src/linux-source-*.tar.xz (6.3 or later) with tools/net/ynl"


def t_ynl(ynl_dir):
    sys.path.insert(0, ynl_dir)
    try:
        from lib import SpecFamily  # the kernel's tools/net/ynl/lib
    except ImportError as e:
        return "cannot import %s/lib: %s" % (ynl_dir, e)
    try:
        # validates against ../genetlink-legacy.yaml of the spec itself,
        # then resolves every set, attribute, enum and operation
        fam = SpecFamily(SPEC)
    except Exception as e:  # noqa: BLE001 - whatever ynl raises
        return "SpecFamily(%s): %s: %s" % (SPEC, type(e).__name__, e)
    errs = []
    if fam.name != "mpip":
        errs.append("family name %s" % fam.name)
    if fam.msgs["get-status"].value != 1 or fam.msgs["get-rules"].value != 16:
        errs.append("op values: get-status %s, get-rules %s"
                    % (fam.msgs["get-status"].value, fam.msgs["get-rules"].value))
    rule = fam.attr_sets["rule"]
    if rule["dport"].struct_name != "rule-range" or rule["mode"].value != 14:
        errs.append("rule set: dport struct %s, mode value %s"
                    % (rule["dport"].struct_name, rule["mode"].value))
    return "\n".join(errs) or None


def main():
    print("KTAP version 1")
    henums, hdefines, hstructs = parse_header(HEADER)
    plan = 7 + len(henums) + 1
    print("1..%d" % plan)
    try:
        spec = load_spec()
        err = None if isinstance(spec, dict) else "not a mapping"
    except Exception as e:  # noqa: BLE001 - yaml errors, missing file
        spec, err = None, "%s: %s" % (type(e).__name__, e)
    report(err is None, "the spec is YAML (python3-yaml)", err)
    if spec is None:
        for i in range(plan - 1):
            report(False, "spec test %d (the spec did not load)" % (i + 2))
        return finish()

    err = t_schema(spec)
    report(err is None, "it validates against the genetlink-legacy schema", err)
    try:
        err = t_references(spec)
    except (KeyError, TypeError) as e:
        err = "%s: %s" % (type(e).__name__, e)
    report(err is None, "every set, enum, struct and attribute it names is defined", err)
    report(t_family(spec, hdefines) is None,
           "family name and version as MPIP_GENL_NAME and MPIP_GENL_VERSION",
           t_family(spec, hdefines))

    try:
        senums, sdefines = spec_enums(spec)
    except (KeyError, TypeError) as e:
        senums, sdefines = {}, {}
        report(False, "the spec's enums", "%s: %s" % (type(e).__name__, e))
    for name, entries in henums.items():
        err = t_enum(name, entries, senums[name]) if name in senums else \
            "enum %s is in the header, not in the spec" % name
        report(err is None, "enum %s: same names and values in the header and the spec" % name, err)
    missing = [n for n in senums if n not in henums]
    maxes = ["#define %s %s in the header, %s by the spec" % (k, hdefines.get(k), v)
             for k, v in sdefines.items() if hdefines.get(k) != v]
    maxes += ["#define %s %s in the header, not by the spec" % (k, v)
              for k, v in hdefines.items()
              if k.endswith("_MAX") and k not in sdefines]
    err = "\n".join(["enum %s is in the spec, not in the header" % str(n) for n in missing]
                    + maxes) or None
    report(err is None, "no enum in the spec that the header lacks; the _MAX defines", err)
    err = t_struct(spec, hstructs)
    report(err is None, "struct mpip_rule_range as in the header", err)
    try:
        err = t_policy(spec, henums)
    except (KeyError, ValueError, OSError) as e:
        err = "%s: %s" % (type(e).__name__, e)
    report(err is None, "the spec's checks are kernel/netlink.c's policy ranges", err)

    with tempfile.TemporaryDirectory() as tmp:
        ynl_dir, why = find_ynl(tmp)
        name = "ynl SpecFamily (tools/net/ynl/lib of linux-source) reads the spec"
        if ynl_dir is None:
            report(False, name, why + " (tools/deps.sh installs linux-source-6.12)")
        else:
            print("# ynl from %s" % ynl_dir)
            err = t_ynl(ynl_dir)
            report(err is None, name, err)
    if len(results) != plan:
        print("# ran %d tests, planned %d" % (len(results), plan))
        results.append((False, "plan", None))
    return finish()


def finish():
    passed = sum(1 for ok, _, d in results if ok and d is None)
    skipped = sum(1 for ok, _, d in results if d)
    failed = sum(1 for ok, _, d in results if not ok)
    print("nlspec: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
