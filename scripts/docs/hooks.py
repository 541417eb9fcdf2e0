"""mkdocs hooks for the etcdlock site (mkdocs.yml `hooks:`).

The site reuses the repository's markdown instead of copying it: the READMEs (whose examples
the test suites run) and docs/design.md stay the one source, and a page pulls in a file or one
section of it with a line of its own:

    <!-- include: bindings-python/README.md#task-queue-and-once-per-period-jobs level=3 notitle -->

- ``PATH`` is from the repository root; ``#SLUG`` picks the section whose heading slugifies to
  SLUG (up to the next heading of the same or a higher level; headings inside code fences do not
  count); ``#SLUG intro`` stops at the next heading of any level.
- ``level=N`` moves the section's headings so that its first one is at level N; ``notitle``
  drops that first heading line.
- The directive's indentation is given to every included line (for content tabs).
- Relative links in the included text are rewritten for the page: to the page that includes
  the target (a whole file, or the section an anchor names), to a file under docs/, or, for a
  file the site does not hold, to plain text naming its repository path. An anchor-only link
  whose section is not on the page goes to the page that includes that section, else to text.
- In ```rust blocks, rustdoc's hidden lines (``# ...``) are dropped, as rustdoc shows them.

A page's own links to repository files outside docs/ become text naming the file (the site
holds no copy of them).

``on_files`` adds the generated API references (scripts/docs.sh writes them under api/ in
$ETCDLOCK_DOCS_GEN, default target/docs-gen) as files of the site, so that links to them are
checked like any other link.
"""

import logging
import os
import posixpath
import re

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRECTIVE = re.compile(r"^([ \t]*)<!-- include: (\S+?)(?:#(\S+))?((?: \S+)*) -->[ \t]*$", re.M)
LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\])\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6}) +(.*?) *#*$")

# Where every include directive of the site points: "path" or "path#slug" -> (page src path,
# the section's heading text, or None when the page drops it or includes the whole file).
_targets = {}
# A warning here fails `mkdocs build --strict` like mkdocs' own.
log = logging.getLogger("mkdocs.hooks.etcdlock")


def toc_slug(text):
    """The anchor mkdocs gives a heading (Python-Markdown's toc slugify, as mkdocs.yml has it)."""
    from markdown.extensions.toc import slugify as md_slugify

    return md_slugify(re.sub(r"`([^`]*)`", r"\1", text), "-")


def heading_text(path, slug):
    """The text of the heading of PATH whose GitHub slug is SLUG, or None."""
    try:
        lines = read(path).split("\n")
    except ValueError:
        return None
    for _, _, text in headings(lines):
        if slugify(text) == slug:
            return text
    return None


def slugify(text):
    """GitHub's and Python-Markdown's toc slug for ordinary headings."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def headings(lines):
    """(index, level, text) of each heading outside code fences."""
    out, fenced = [], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            out.append((i, len(m.group(1)), m.group(2)))
    return out


def read(path):
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        raise ValueError(f"include: {path} does not exist")
    with open(full, encoding="utf-8") as f:
        return f.read()


def section(path, slug, intro):
    lines = read(path).split("\n")
    hs = headings(lines)
    if slug is None:
        return lines, hs
    for n, (i, level, text) in enumerate(hs):
        if slugify(text) == slug:
            end = len(lines)
            for j, lv, _ in hs[n + 1:]:
                if intro or lv <= level:
                    end = j
                    break
            part = lines[i:end]
            return part, [(k - i, lv, t) for k, lv, t in hs if i <= k < end]
    raise ValueError(f"include: no section #{slug} in {path}")


def strip_rust_hidden(lines):
    out, lang = [], None
    for line in lines:
        m = FENCE.match(line)
        if m:
            if lang is None:
                info = line.strip()[3:].strip()
                lang = info.split(",")[0] or "text"
                if lang == "rust":
                    line = line[: line.index(line.strip())] + "```rust"
            else:
                lang = None
            out.append(line)
            continue
        if lang == "rust" and re.match(r"^\s*#( |$)", line):
            continue
        out.append(line)
    return out


def as_text(label, target, repo):
    """A link to a file the site does not hold, as text: its label and its repository path."""
    bare = label.strip("`")
    if bare in (target, repo) or repo.endswith("/" + bare):
        return f"`{repo}` (in the repository)"
    return f"{label} (`{repo}` in the repository)"


def page_link(from_page, to_page, anchor):
    rel = posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")
    return rel + (f"#{anchor}" if anchor else "")


def rewrite_links(text, src, page, local_slugs, docs_dir):
    base = posixpath.dirname(src)

    def fix(m):
        label, target = m.group(1), m.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        repo = posixpath.normpath(posixpath.join(base, path)) if path else src
        if not path and anchor in local_slugs:
            return f"{label}(#{local_slugs[anchor]})"
        dest = None
        if anchor and f"{repo}#{anchor}" in _targets:
            to, text = _targets[f"{repo}#{anchor}"]
            dest = page_link(page, to, toc_slug(text) if text else None)
        elif repo in _targets:
            text = heading_text(repo, anchor) if anchor else None
            dest = page_link(page, _targets[repo][0], toc_slug(text) if text else None)
        elif repo.startswith("docs/") and os.path.exists(os.path.join(docs_dir, repo[5:])):
            text = heading_text(repo, anchor) if anchor else None
            dest = page_link(page, repo[5:], toc_slug(text) if text else None)
        if dest is not None:
            return f"{label}({dest})"
        if path and not os.path.exists(os.path.join(ROOT, repo)):
            log.warning(f"{src} (included in {page}) links to {target}, which does not exist")
        text_label = label[1:-1] if not label.startswith("!") else label[2:-1]
        where = repo + (f"#{anchor}" if anchor and path else "")
        if not path:
            return text_label
        return as_text(text_label, target, where)

    return LINK.sub(fix, text)


def expand(markdown, page_src, docs_dir):
    def one(m):
        indent, path, slug, flags = m.group(1), m.group(2), m.group(3), m.group(4).split()
        opts = dict(f.split("=", 1) for f in flags if "=" in f)
        lines, hs = section(path, slug, "intro" in flags)
        if hs and "level" in opts:
            delta = int(opts["level"]) - hs[0][1]
            for i, lv, t in hs:
                new = min(6, max(1, lv + delta))
                lines[i] = "#" * new + " " + t
        local = {slugify(t): toc_slug(t) for _, _, t in hs}
        if "notitle" in flags and hs and hs[0][0] == 0:
            lines = lines[1:]
            local.pop(slugify(hs[0][2]), None)
        lines = strip_rust_hidden(lines)
        text = rewrite_links("\n".join(lines), path, page_src, local, docs_dir)
        return "\n".join((indent + l) if l.strip() else "" for l in text.split("\n"))

    return DIRECTIVE.sub(one, markdown)


def on_files(files, config):
    """Index every include of every page; add the generated API references as site files."""
    _targets.clear()
    for f in files.documentation_pages():
        with open(f.abs_src_path, encoding="utf-8") as fh:
            for m in DIRECTIVE.finditer(fh.read()):
                key = m.group(2) + (f"#{m.group(3)}" if m.group(3) else "")
                kept = m.group(3) and "notitle" not in m.group(4).split()
                text = heading_text(m.group(2), m.group(3)) if kept else None
                _targets.setdefault(key, (f.src_uri, text))
    gen = os.environ.get("ETCDLOCK_DOCS_GEN", os.path.join(ROOT, "target", "docs-gen"))
    for dirpath, _, names in os.walk(os.path.join(gen, "api")):
        for name in names:
            if name.endswith(".md"):
                continue  # licence texts of the generators' assets: copied by scripts/docs.sh
            rel = os.path.relpath(os.path.join(dirpath, name), gen)
            files.append(File(rel.replace(os.sep, "/"), gen, config["site_dir"], config["use_directory_urls"]))
    return files


def outside_links(markdown, page):
    """A page's own links to repository files outside docs/ (right on GitHub, where the page is
    read in the repository too) become text naming the file; a missing file is a warning."""
    base = posixpath.join("docs", posixpath.dirname(page))

    def fix(m):
        label, target = m.group(1), m.group(2)
        path = target.partition("#")[0]
        if not path or re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return m.group(0)
        repo = posixpath.normpath(posixpath.join(base, path))
        if repo.startswith("docs/"):
            return m.group(0)
        if not os.path.exists(os.path.join(ROOT, repo)):
            log.warning(f"docs/{page} links to {target}, which does not exist")
        return as_text(label[1:-1], target, repo)

    return LINK.sub(fix, markdown)


def on_page_markdown(markdown, page, config, files):
    if os.environ.get("ETCDLOCK_DOCS_CONTROL") == "broken-link" and page.file.src_uri == "index.md":
        # scripts/docs.sh's control: the strict build must fail on this link.
        markdown += "\n\n[control](no-such-page.md)\n"
    own = outside_links(markdown, page.file.src_uri)
    return expand(own, page.file.src_uri, config["docs_dir"])
