"""Which PyPI distribution provides an import name, where the two differ (yaml -> PyYAML)."""

from __future__ import annotations

import re

# fmt: off
DISTRIBUTIONS = {
    "cv2": "opencv-python-headless", "PIL": "Pillow", "sklearn": "scikit-learn", "skimage": "scikit-image",
    "mpl_toolkits": "matplotlib", "pylab": "matplotlib", "Bio": "biopython", "tables": "tables",
    "fitz": "PyMuPDF", "pptx": "python-pptx", "docx": "python-docx", "xlsxwriter": "XlsxWriter",
    "skbuild": "scikit-build", "igraph": "igraph", "cairo": "pycairo", "osgeo": "GDAL", "shapefile": "pyshp",
    "faiss": "faiss-cpu", "tensorflow_datasets": "tensorflow-datasets", "torchvision": "torchvision",
    "sentencepiece": "sentencepiece", "jax": "jax", "Levenshtein": "Levenshtein", "pyarrow": "pyarrow",
    "umap": "umap-learn", "hdbscan": "hdbscan", "lightgbm": "lightgbm", "xgboost": "xgboost",
    "statsmodels": "statsmodels", "pandas_datareader": "pandas-datareader", "yaml": "PyYAML",
    "ruamel": "ruamel.yaml", "bs4": "beautifulsoup4", "dateutil": "python-dateutil", "lxml": "lxml",
    "markdown": "Markdown", "frontmatter": "python-frontmatter", "toml": "toml", "tomli_w": "tomli-w",
    "ujson": "ujson", "simplejson": "simplejson", "msgpack": "msgpack", "snappy": "python-snappy",
    "lz4": "lz4", "zstandard": "zstandard", "magic": "python-magic", "slugify": "python-slugify",
    "jsonschema": "jsonschema", "multipart": "python-multipart", "dotenv": "python-dotenv",
    "decouple": "python-decouple", "editor": "python-editor", "docopt": "docopt", "pyparsing": "pyparsing",
    "chardet": "chardet", "charset_normalizer": "charset-normalizer", "unidecode": "Unidecode",
    "Cheetah": "Cheetah3", "jinja2": "Jinja2", "markupsafe": "MarkupSafe", "mako": "Mako",
    "pygments": "Pygments", "sphinx": "Sphinx", "docutils": "docutils", "nltk": "nltk",
    "stemmer": "PyStemmer", "Stemmer": "PyStemmer", "xmltodict": "xmltodict", "defusedxml": "defusedxml",
    "ldap": "python-ldap", "ldap3": "ldap3", "jwt": "PyJWT", "jose": "python-jose", "Crypto": "pycryptodome",
    "Cryptodome": "pycryptodomex", "OpenSSL": "pyOpenSSL", "nacl": "PyNaCl", "gnupg": "python-gnupg",
    "gssapi": "gssapi", "kerberos": "pykerberos", "krb5": "krb5", "bcrypt": "bcrypt", "passlib": "passlib",
    "oauthlib": "oauthlib", "jks": "pyjks", "keyring": "keyring", "certifi": "certifi", "saml2": "pysaml2",
    "xmlsec": "xmlsec", "google.protobuf": "protobuf", "grpc": "grpcio",
    "google.cloud.storage": "google-cloud-storage", "google.auth": "google-auth",
    "googleapiclient": "google-api-python-client", "socks": "PySocks", "zmq": "pyzmq",
    "websocket": "websocket-client", "engineio": "python-engineio", "socketio": "python-socketio",
    "telegram": "python-telegram-bot", "slack_sdk": "slack-sdk", "flask_cors": "Flask-Cors",
    "flask_sqlalchemy": "Flask-SQLAlchemy", "flask_login": "Flask-Login", "flask_wtf": "Flask-WTF",
    "flask_migrate": "Flask-Migrate", "rest_framework": "djangorestframework",
    "corsheaders": "django-cors-headers", "django_filters": "django-filter",
    "debug_toolbar": "django-debug-toolbar", "environ": "django-environ", "memcache": "python-memcached",
    "consul": "python-consul", "etcd": "python-etcd", "kafka": "kafka-python", "pika": "pika",
    "paho": "paho-mqtt", "nmap": "python-nmap", "whois": "python-whois", "dns": "dnspython",
    "ipaddr": "ipaddr", "netaddr": "netaddr", "requests_toolbelt": "requests-toolbelt",
    "hyperframe": "hyperframe", "h2": "h2", "wsgi_intercept": "wsgi-intercept", "werkzeug": "Werkzeug",
    "multidict": "multidict", "aiohttp": "aiohttp", "httpx": "httpx", "starlette": "starlette",
    "github": "PyGithub", "gitlab": "python-gitlab", "git": "GitPython", "hglib": "python-hglib",
    "svn": "svn", "docker": "docker", "kubernetes": "kubernetes", "boto": "boto", "botocore": "botocore",
    "MySQLdb": "mysqlclient", "pymysql": "PyMySQL", "psycopg2": "psycopg2-binary", "psycopg": "psycopg",
    "cx_Oracle": "cx-Oracle", "pymssql": "pymssql", "pyodbc": "pyodbc", "sqlalchemy": "SQLAlchemy",
    "pymongo": "pymongo", "bson": "pymongo", "gridfs": "pymongo", "redis": "redis",
    "cassandra": "cassandra-driver", "neo4j": "neo4j", "influxdb": "influxdb",
    "elasticsearch": "elasticsearch", "sqlite_utils": "sqlite-utils", "alembic": "alembic",
    "peewee": "peewee", "serial": "pyserial", "usb": "pyusb", "gi": "PyGObject", "dbus": "dbus-python",
    "wx": "wxPython", "PyQt5": "PyQt5", "PyQt6": "PyQt6", "PySide2": "PySide2", "PySide6": "PySide6",
    "pyaudio": "PyAudio", "sounddevice": "sounddevice", "alsaaudio": "pyalsaaudio", "smbus": "smbus2",
    "RPi": "RPi.GPIO", "win32api": "pywin32", "win32con": "pywin32", "win32com": "pywin32",
    "pythoncom": "pywin32", "pywintypes": "pywin32", "psutil": "psutil", "pexpect": "pexpect",
    "ptyprocess": "ptyprocess", "daemon": "python-daemon", "systemd": "systemd-python",
    "prctl": "python-prctl", "pyudev": "pyudev", "xdg": "pyxdg", "Xlib": "python-xlib", "pynput": "pynput",
    "pyperclip": "pyperclip", "OpenGL": "PyOpenGL", "pygame": "pygame", "vlc": "python-vlc",
    "mpv": "python-mpv", "attr": "attrs", "pkg_resources": "setuptools", "setuptools_scm": "setuptools-scm",
    "_pytest": "pytest", "pytest": "pytest", "py": "py", "pluggy": "pluggy",
    "typing_extensions": "typing-extensions", "importlib_metadata": "importlib-metadata",
    "importlib_resources": "importlib-resources", "mypy_extensions": "mypy-extensions",
    "zope": "zope.interface", "dateparser": "dateparser", "pytz": "pytz", "tzlocal": "tzlocal",
    "babel": "Babel", "Cython": "Cython", "pyximport": "Cython", "numpy": "numpy", "scipy": "scipy",
    "pybind11": "pybind11", "cffi": "cffi", "ply": "ply", "lark": "lark", "antlr4": "antlr4-python3-runtime",
    "hamcrest": "PyHamcrest", "mock": "mock", "nose": "nose", "nose2": "nose2", "testtools": "testtools",
    "fixtures": "fixtures", "freezegun": "freezegun", "faker": "Faker", "factory": "factory-boy",
    "responses": "responses", "vcr": "vcrpy", "httpretty": "httpretty", "hypothesis": "hypothesis",
    "pytest_asyncio": "pytest-asyncio", "pytest_mock": "pytest-mock", "pytest_benchmark": "pytest-benchmark",
    "pytest_cov": "pytest-cov", "xdist": "pytest-xdist", "pytest_timeout": "pytest-timeout",
    "pytest_httpserver": "pytest-httpserver", "pytest_lazyfixture": "pytest-lazy-fixture",
    "pytest_django": "pytest-django", "syrupy": "syrupy", "trustme": "trustme", "click": "click",
    "typer": "typer", "rich": "rich", "colorama": "colorama", "termcolor": "termcolor", "tqdm": "tqdm",
    "tabulate": "tabulate", "prompt_toolkit": "prompt-toolkit", "ruamel.yaml": "ruamel.yaml",
    "dns.resolver": "dnspython", "sortedcontainers": "sortedcontainers", "more_itertools": "more-itertools",
    "cachetools": "cachetools", "wrapt": "wrapt", "decorator": "decorator", "six": "six", "future": "future",
    "past": "future", "gflags": "python-gflags", "absl": "absl-py", "fire": "fire", "tenacity": "tenacity",
    "retrying": "retrying", "backoff": "backoff", "structlog": "structlog", "loguru": "loguru",
    "pydantic": "pydantic", "marshmallow": "marshmallow", "voluptuous": "voluptuous", "cerberus": "Cerberus",
    "schema": "schema", "jmespath": "jmespath", "jsonpointer": "jsonpointer", "jsonpatch": "jsonpatch",
    "pathspec": "pathspec", "watchdog": "watchdog", "sh": "sh", "plumbum": "plumbum", "invoke": "invoke",
    "fabric": "fabric", "paramiko": "paramiko", "scp": "scp", "smmap": "smmap", "gitdb": "gitdb",
    "tree_sitter": "tree-sitter", "pyflakes": "pyflakes", "pycodestyle": "pycodestyle", "flake8": "flake8",
    "pylint": "pylint", "astroid": "astroid", "isort": "isort", "black": "black", "mypy": "mypy",
    "jedi": "jedi", "parso": "parso", "IPython": "ipython", "ipykernel": "ipykernel", "nbformat": "nbformat",
    "nbconvert": "nbconvert", "notebook": "notebook", "ipywidgets": "ipywidgets",
}
# fmt: on
"""Import name -> PyPI distribution, for the common cases where they differ (and a few where they agree)."""

_SEPARATORS = re.compile(r"[-_.]+")


NAMESPACES = {"jaraco", "zope", "backports", "sphinxcontrib", "azure", "plone", "collective", "ruamel",
              "flufl", "repoze", "paste", "pyramid_", "oslo", "keystoneauth1", "opentelemetry"}
"""Top-level names shared by many distributions, each named after `top.sub`."""


def distribution_for(import_name: str) -> str:
    """The PyPI distribution that provides the module; falls back to the top-level name itself.

    Dotted names are looked up longest prefix first (`google.protobuf.message` -> protobuf).
    """
    parts = import_name.split(".")
    for n in range(len(parts), 0, -1):
        dist = DISTRIBUTIONS.get(".".join(parts[:n]))
        if dist:
            return dist
    if parts[0] in NAMESPACES and len(parts) > 1:
        return f"{parts[0]}.{parts[1]}"  # jaraco.functools, zope.interface, backports.zoneinfo
    return parts[0]


def normalize(name: str) -> str:
    """The PEP 503 normalized form of a distribution name (`PyYAML` -> `pyyaml`, `a_b.c` -> `a-b-c`)."""
    return _SEPARATORS.sub("-", name).lower()


def requirement_name(spec: str) -> str | None:
    """The normalized distribution name of a PEP 508 requirement; None for options, paths and URLs."""
    spec = spec.strip()
    if not spec or spec.startswith(("-", ".", "/", "#")) or "://" in spec.split("@", 1)[0]:
        return None
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return normalize(match.group(1)) if match else None
