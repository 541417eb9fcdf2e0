"""Prints one fenced code block of a Markdown file: readme_blocks.py FILE LANG INDEX."""
import re
import sys

path, lang, index = sys.argv[1], sys.argv[2], int(sys.argv[3])
blocks = re.findall(r"```" + re.escape(lang) + r"\n(.*?)```", open(path, encoding="utf-8").read(), re.S)
sys.stdout.write(blocks[index])
