"""Ecosystems: everything that knows one language, behind the protocol in `base.py`.

Files: `base.py` (the Ecosystem protocol, RepairContext), `detect.py` (the ordered list and detection),
`repofiles.py` (safe reads of a checkout, for every survey), `debian_names.py` (headers, libraries and tools
-> Debian packages), `python/` (the first ecosystem).
"""
