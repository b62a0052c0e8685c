"""Paraphrased questions over two real corpora that every Python ships with.

Each question says in other words what a document is about, so that it shares
few words with the file that answers it (no statement or module name, few of its
identifiers): the kind of question keyword search misses and search by meaning
should find. Nothing is downloaded:

* ``reference``: prose, the topics of the Python language reference that
  ``pydoc`` shows (``pydoc_data.topics``), one file per topic;
* ``stdlib``: code with its docstrings, the ``.py`` files of the standard library
  of the Python running the benchmark (``sysconfig.get_paths()["stdlib"]``).

An answer lists every file that answers the question; a file the running Python
does not have is left out, and a question left with no answer is skipped.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

# The folders of the standard library the corpus holds, besides its top level.
PACKAGES = (
    "json", "logging", "email", "email/mime", "http", "urllib", "concurrent/futures", "collections",
    "unittest", "xml/etree", "html", "importlib", "sqlite3", "asyncio", "multiprocessing", "wsgiref",
)

REFERENCE_QUESTIONS: list[tuple[str, list[str]]] = [
    ("how do I leave a loop early, before it has gone through every item", ["break"]),
    ("skip the rest of the current pass and go on with the next one", ["continue"]),
    ("make sure some cleanup code runs even when an error happens", ["try", "with", "context-managers"]),
    ("deliberately signal that something went wrong", ["raise", "exceptions"]),
    ("a statement that does nothing at all, as a placeholder", ["pass"]),
    ("hand a value back to whoever called the function", ["return"]),
    ("produce a series of values lazily from inside a function, one at a time", ["yield"]),
    ("a tiny anonymous function written inline in an expression", ["lambda"]),
    ("bring names defined in another module into the current one", ["import"]),
    ("change a variable of the enclosing function from a nested function", ["nonlocal", "naming"]),
    ("modify a module level variable from inside a function", ["global", "naming"]),
    ("remove a name binding, or delete an item from a list", ["del"]),
    ("verify a condition while debugging and stop the program if it does not hold", ["assert"]),
    ("run a block only when a condition holds, and another block otherwise", ["if", "else"]),
    ("repeat a block as long as a condition stays true", ["while"]),
    ("go over each element of a list in turn", ["for"]),
    ("acquire a resource on entry and release it automatically on exit", ["with", "context-managers"]),
    ("define a new type of object with its own methods", ["class"]),
    ("what counts as false: zero, empty containers and None", ["truth"]),
    ("which operators bind tighter when an expression has no parentheses", ["operator-summary"]),
    ("raise a number to an exponent", ["power"]),
    ("move the bits of an integer to the left or to the right", ["shifting"]),
    ("take a sub-range of a list with a start, a stop and a step", ["slicings"]),
    ("put the values of variables into text with a width and a precision", ["formatstrings"]),
    ("change the case of text, strip whitespace or split it into words", ["string-methods"]),
    ("tables that map keys to values, and their methods", ["typesmapping", "dict"]),
    ("add or remove elements of a list in place: append, extend, pop", ["typesseq-mutable", "lists"]),
    ("numbers with a real and an imaginary part", ["imaginary", "numeric-types", "numbers"]),
    ("how a variable is looked up in nested scopes, and what a free variable is", ["naming", "execmodel"]),
    ("methods whose names begin and end with two underscores that customize how objects behave", ["specialnames", "customization"]),
    ("control what happens when an attribute is looked up or assigned on an object", ["attribute-access"]),
    ("wait until an asynchronous operation has completed", ["await", "async"]),
    ("coroutine functions, and loops over asynchronous iterators", ["async"]),
    ("catch an error and handle it", ["try", "exceptions"]),
    ("the value that means nothing, returned by functions that have no result", ["bltin-null-object"]),
    ("tell whether two names refer to the very same object rather than equal ones", ["comparisons"]),
    ("the tool built into Python for stepping through a program interactively", ["debugger"]),
    ("combine conditions with and, or and not", ["booleans"]),
    ("combine two integers bit by bit", ["bitwise"]),
    ("how arguments are matched to parameters when a function is called with keywords", ["calls"]),
    ("shorthand such as x += 1 that updates a variable", ["augassign"]),
    ("give the items of a pair to two names at once: a, b = pair", ["assignment"]),
    ("pick an element of a container by its index or its key with square brackets", ["subscriptions"]),
    ("every object has an identity, a type and a value", ["objects"]),
    ("check whether an item is contained in a collection", ["in", "comparisons"]),
    ("attributes that objects and modules have, like their name and documentation string", ["specialattrs"]),
    ("decorators, and default values of parameters", ["function"]),
    ("backslash sequences in text literals, such as newline and tab, and raw literals", ["strings"]),
]

STDLIB_QUESTIONS: list[tuple[str, list[str]]] = [
    ("make a scratch folder that is deleted automatically when I am done with it", ["tempfile.py"]),
    ("duplicate an entire directory hierarchy to another location on disk", ["shutil.py"]),
    ("turn a Python object into a stream of bytes so it can be stored and restored later", ["pickle.py"]),
    ("compare two versions of a text line by line and show what was added or removed", ["difflib.py"]),
    ("which weekday does a given date fall on, and print a month as a grid", ["calendar.py"]),
    ("break a long paragraph into lines so that none is wider than a limit", ["textwrap.py"]),
    ("check whether a filename matches a shell-style wildcard such as star dot txt", ["fnmatch.py"]),
    ("split a command string into arguments the way a Unix shell would, honouring quotes", ["shlex.py"]),
    ("keep a list in order while inserting new items by halving the search interval", ["bisect.py"]),
    ("a priority queue where the smallest item always comes out first", ["heapq.py"]),
    ("run a function later, after a delay, at a planned time", ["sched.py"]),
    ("draw numbers from a normal distribution and shuffle a list", ["random.py"]),
    ("compute the median and the standard deviation of some numbers", ["statistics.py"]),
    ("exact arithmetic with ratios of whole numbers, without rounding errors", ["fractions.py"]),
    ("base ten floating point for money, with rounding you can control", ["decimal.py", "_pydecimal.py"]),
    ("read settings from an INI style file divided into sections", ["configparser.py"]),
    ("encode binary data as printable ASCII characters so it survives email", ["base64.py"]),
    ("compute a SHA-256 checksum of some bytes", ["hashlib.py"]),
    ("sign a message with a secret key so that the receiver can tell it was not tampered with", ["hmac.py"]),
    ("generate a hard to guess token for a password reset link", ["secrets.py"]),
    ("open a compressed .gz file and read it as if it were a normal file", ["gzip.py"]),
    ("pack many files into one tape archive, optionally compressed", ["tarfile.py"]),
    ("copy an object together with every object nested inside it", ["copy.py"]),
    ("print nested data structures indented so that people can read them", ["pprint.py"]),
    ("measure how long a small snippet of code takes to execute", ["timeit.py"]),
    ("step through a program line by line in an interactive debugger", ["pdb.py", "bdb.py"]),
    ("find out which function calls take the most time in a program", ["cProfile.py", "profile.py", "pstats.py"]),
    ("define command line flags with help messages and parse them", ["argparse.py", "optparse.py", "getopt.py"]),
    ("write diagnostic messages to files at different severity levels", ["logging/__init__.py", "logging/handlers.py"]),
    ("parse a JavaScript object notation string into Python dicts and lists", ["json/__init__.py", "json/decoder.py"]),
    ("fetch a web page from a server over the network", ["urllib/request.py", "http/client.py"]),
    ("serve the files of the current folder to a web browser", ["http/server.py"]),
    ("run several tasks at once in a pool of worker threads and collect their results",
     ["concurrent/futures/thread.py", "concurrent/futures/_base.py", "multiprocessing/pool.py"]),
    ("count how many times each item appears, and tuples whose fields have names", ["collections/__init__.py"]),
    ("check that a function returns the expected value in an automated test with assertions", ["unittest/case.py"]),
    ("parse an XML document into a tree of elements", ["xml/etree/ElementTree.py"]),
    ("compose an email message with attachments", ["email/message.py", "email/mime/multipart.py", "email/mime/base.py"]),
    ("guess the type of a file from its extension, such as image/png", ["mimetypes.py"]),
    ("read a spreadsheet exported as comma separated values", ["csv.py"]),
    ("get a given line of a source file quickly, keeping the file in memory", ["linecache.py"]),
    ("turn a string such as 192.168.0.1 into an object and check whether it belongs to a network", ["ipaddress.py"]),
    ("start an external program and capture what it prints", ["subprocess.py"]),
    ("find the files under a folder whose names match a pattern like *.py", ["glob.py", "fnmatch.py"]),
    ("the difference between two dates and times, and time zones", ["datetime.py", "_pydatetime.py"]),
    ("turn &amp; and other escaped characters of web markup back into text", ["html/__init__.py"]),
    ("remember the results of a function so repeated calls with the same arguments are fast", ["functools.py"]),
    ("share data between processes with queues and locks", ["multiprocessing/queues.py", "multiprocessing/synchronize.py"]),
    ("an event loop that runs coroutines and waits for network sockets", ["asyncio/base_events.py", "asyncio/events.py"]),
    ("a small web application interface between servers and Python frameworks", ["wsgiref/simple_server.py", "wsgiref/handlers.py"]),
    ("store rows in an embedded SQL database file", ["sqlite3/__init__.py", "sqlite3/dbapi2.py"]),
]


class Corpus:
    """A corpus as files to write into a workspace, and its questions."""

    def __init__(self, name: str, files: dict[str, str], questions: list[tuple[str, list[str]]]) -> None:
        self.name = name
        self.files = files
        present = set(files)
        self.questions = []
        for question, answers in questions:
            held = [answer for answer in answers if answer in present]
            if held:
                self.questions.append((question, held))

    def write(self, root: Path) -> None:
        for relative, text in self.files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def reference() -> Corpus:
    """The language reference's topics, one ``reference/<topic>.txt`` each."""
    from pydoc_data.topics import topics

    files = {f"reference/{topic}.txt": text for topic, text in topics.items()}
    questions = [(question, [f"reference/{topic}.txt" for topic in answers]) for question, answers in REFERENCE_QUESTIONS]
    return Corpus("reference", files, questions)


def stdlib() -> Corpus:
    """The standard library's top-level modules and those of PACKAGES, under ``lib/``."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = [path.name for path in root.glob("*.py")]
    for package in PACKAGES:
        found += [f"{package}/{path.name}" for path in (root / package).glob("*.py")]
    files = {f"lib/{relative}": (root / relative).read_text(encoding="utf-8", errors="replace") for relative in sorted(found)}
    questions = [(question, [f"lib/{answer}" for answer in answers]) for question, answers in STDLIB_QUESTIONS]
    return Corpus("stdlib", files, questions)


CORPORA = {"reference": reference, "stdlib": stdlib}
