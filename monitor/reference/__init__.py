"""The site's generated reference pages: the configuration from the JSON Schema, the command line
from the argument parser. `mkdocs_hooks.py` adds them to the site at build time, so they always
describe the code being built; nothing generated is checked in."""
