#!/usr/bin/env python3
"""A strict reader of the Prometheus text exposition format (0.0.4), for the bindings' metrics
tests: every line must be a HELP, a TYPE or a sample of the family its TYPE announced, names and
labels well formed, each family once and contiguous, counters not negative, and each histogram's
buckets in increasing order of `le`, cumulative, ending at `+Inf` equal to its `_count` (for
each series of it: each set of its other labels, such as `client`).

As a module: `parse(text)` returns `{sample: value}` with samples written `name` or
`name{label="value",...}` (labels in the order given), or raises ValueError naming the line.
`parse(text, client="x")` also requires every sample's first label to be `client="x"` (the
label etcdlock gives each client's series) and leaves it out of the keys.
As a program (for the Node and C tests): reads the text on stdin and prints that dict as JSON
(`+Inf` as the string "+Inf"), or with `--lines` one `sample value` line each; `--client NAME`
as `client=` above; on bad text, the error on stderr and exit status 1.
"""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("", "_sum", "_count")}


def value(text, line):
    if text in ("+Inf", "-Inf", "NaN"):
        return float(text.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        raise ValueError(f"not a number {text!r}: {line}")
    return float(text)


def sample(line):
    m = NAME.match(line)
    if not m:
        raise ValueError(f"no metric name: {line}")
    name, rest, labels = m.group(0), line[m.end():], []
    if rest.startswith("{"):
        close = rest.index("}") if "}" in rest else -1
        body = rest[1:close]
        if close < 0 or (body and not re.fullmatch(rf"{LABEL.pattern}(,{LABEL.pattern})*,?", body)):
            raise ValueError(f"bad labels: {line}")
        labels = LABEL.findall(body)
        if len({k for k, _ in labels}) != len(labels):
            raise ValueError(f"a label given twice: {line}")
        rest = rest[close + 1 :]
    parts = rest.split(" ")
    if len(parts) not in (2, 3) or parts[0] != "":
        raise ValueError(f"expected ' value [timestamp]': {line}")
    if len(parts) == 3 and not re.fullmatch(r"-?\d+", parts[2]):
        raise ValueError(f"bad timestamp: {line}")
    return name, labels, value(parts[1], line)


def family_of(name, types):
    for fam, kind in types.items():
        if any(name == fam + s for s in SUFFIXES.get(kind, ("",))):
            return fam
    return None


def check_histogram(fam, samples, line):
    """Each series of the histogram (its samples grouped by their labels other than `le`)."""
    groups = {}
    for n, l, v in samples:
        groups.setdefault(tuple((k, x) for k, x in l if k != "le"), []).append((n, l, v))
    for group in groups.values():
        check_histogram_series(fam, group, line)


def check_histogram_series(fam, samples, line):
    buckets = [(dict(l).get("le"), v) for n, l, v in samples if n == fam + "_bucket"]
    if not buckets or buckets[-1][0] != "+Inf":
        raise ValueError(f"histogram {fam} does not end with an le=\"+Inf\" bucket (before: {line})")
    les = [value(le, line) if le is not None else math.nan for le, _ in buckets]
    counts = [v for _, v in buckets]
    if any(not a < b for a, b in zip(les, les[1:])) or any(math.isnan(x) for x in les):
        raise ValueError(f"histogram {fam}: le not increasing: {les}")
    if any(b < a for a, b in zip(counts, counts[1:])):
        raise ValueError(f"histogram {fam}: buckets not cumulative: {counts}")
    count = [v for n, _, v in samples if n == fam + "_count"]
    if len(count) != 1 or count[0] != counts[-1] or len([1 for n, _, _ in samples if n == fam + "_sum"]) != 1:
        raise ValueError(f"histogram {fam}: needs one _sum and one _count equal to the +Inf bucket")


def escape(label_value):
    """A label value as the text format writes it."""
    return label_value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def parse(text, client=None):
    if text and not text.endswith("\n"):
        raise ValueError("the text must end with a newline")
    types, helps, done, out = {}, set(), set(), {}
    current, samples = None, []

    def close(line):
        if current is not None and types.get(current) == "histogram":
            check_histogram(current, samples, line)
        if current is not None:
            done.add(current)

    for line in text.splitlines():
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (\S+) (.*)", line)
            if not m and re.match(r"# (HELP|TYPE) ", line):
                raise ValueError(f"bad {line[2:6]} line: {line}")
            if not m:
                continue  # a comment
            kind, name, rest = m.groups()
            if not NAME.fullmatch(name):
                raise ValueError(f"bad metric name: {line}")
            if kind == "TYPE":
                if rest not in TYPES or name in types:
                    raise ValueError(f"bad or repeated TYPE: {line}")
                if samples and current == name:
                    raise ValueError(f"TYPE after samples: {line}")
                types[name] = rest
            elif name in helps:
                raise ValueError(f"repeated HELP: {line}")
            else:
                helps.add(name)
            if name != current:
                close(line)
                if name in done:
                    raise ValueError(f"family {name} not contiguous: {line}")
                current, samples = name, []
            continue
        if not line:
            continue  # the format ignores empty lines (prom-client writes one between families)
        if not line.strip():
            raise ValueError("a line of blanks")
        name, labels, v = sample(line)
        fam = family_of(name, types) or name
        if fam != current:
            close(line)
            if fam in done:
                raise ValueError(f"family {fam} not contiguous: {line}")
            current, samples = fam, []
        if types.get(fam) in ("counter", "histogram") and v < 0:
            raise ValueError(f"negative {types[fam]}: {line}")
        if types.get(fam) == "histogram" and name == fam + "_bucket" and [k for k, _ in labels][-1:] != ["le"]:
            raise ValueError(f"bucket without le: {line}")
        if client is not None:
            if labels[:1] != [("client", escape(client))]:
                raise ValueError(f"the first label is not client={escape(client)!r}: {line}")
            labels = labels[1:]
        key = name + ("{" + ",".join(f'{k}="{v_}"' for k, v_ in labels) + "}" if labels else "")
        if key in out:
            raise ValueError(f"sample given twice: {line}")
        out[key] = v
        samples.append((name, labels, v))
    close("the end")
    return out


def main():
    args = sys.argv[1:]
    client = None
    if "--client" in args:
        i = args.index("--client")
        client = args[i + 1]
        del args[i : i + 2]
    try:
        samples = parse(sys.stdin.read(), client=client)
    except ValueError as e:
        print(f"invalid Prometheus text: {e}", file=sys.stderr)
        return 1
    if args == ["--lines"]:
        for k, v in samples.items():
            print(k, repr(v))
    else:
        print(json.dumps({k: ("+Inf" if v == math.inf else v) for k, v in samples.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
