"""Paraphrased questions over real corpora that every Python (or Debian) machine has,
and over short notes written for the purpose.

Each question says in other words what a document is about, so that it shares
few words with the file that answers it (no statement or module name, few of its
identifiers): the kind of question keyword search misses and search by meaning
should find. Nothing is downloaded:

* ``reference``: prose, the topics of the Python language reference that
  ``pydoc`` shows (``pydoc_data.topics``), one file per topic;
* ``stdlib``: code with its docstrings, the ``.py`` files of the standard library
  of the Python running the benchmark (``sysconfig.get_paths()["stdlib"]``);
* ``manual``: the manual pages of command-line tools, prose of another domain;
* ``notes``: 20 short notes of a team's handbook (a few lines each), two
  questions each in other words than the note's; ``few-notes``: the first 5;
* ``packages``: real prose in short documents, the long descriptions of the
  Debian packages installed (``/var/lib/dpkg/status``), each asked by its own
  one-line summary, which often shares words with it.

An answer lists every file that answers the question; a file the running Python
does not have is left out, and a question left with no answer is skipped.
"""

from __future__ import annotations

import re
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

# Manual pages of command-line tools: prose of another domain, written by many
# hands. The corpus holds every page of MANUAL_PAGES the machine has (rendered by
# `man`); a question whose pages are all missing is skipped.
MANUAL_PAGES = (
    "du df tar gzip bzip2 xz zip unzip find grep sed awk sort uniq wc head tail cut paste join tr split "
    "cmp diff comm ln cp mv rm mkdir rmdir chmod chown touch stat file date sleep timeout nohup nice renice "
    "kill ps top free uptime who id su passwd chage ssh scp curl wget ip ss watch xargs tee env seq shuf "
    "factor expr bc base64 sha256sum md5sum fold fmt column nl od hexdump strings readlink realpath basename "
    "dirname mktemp truncate shred sync mount lsblk dmesg flock less more tac rev yes iconv locale make patch "
    "ldd nm objdump strace valgrind script tmux hostname uname lscpu lsof pgrep pkill killall dd fallocate "
    "install numfmt pr expand unexpand csplit tsort printf echo test chrt taskset ionice which whereis apropos "
    "man groups useradd usermod git cmake ld ar as"
).split()

MANUAL_QUESTIONS: list[tuple[str, list[str]]] = [
    ("how much room do the folders under here take up on the drive", ["du"]),
    ("how much room is left on each mounted drive", ["df"]),
    ("bundle a whole folder into one archive for a backup", ["tar", "zip"]),
    ("shrink a file so that it takes less room, and get the original back later", ["gzip", "bzip2", "xz", "zip"]),
    ("look for lines holding some phrase inside many files at once", ["grep"]),
    ("put one word in place of another throughout a stream of text without opening an editor", ["sed", "awk"]),
    ("put the lines of a text in alphabetical or numeric order", ["sort"]),
    ("drop repeated neighbouring lines, or tell how often each one occurs", ["uniq"]),
    ("show only the beginning of a long file", ["head"]),
    ("keep watching a log while new lines are appended to it", ["tail", "less"]),
    ("take out certain columns of every line, split on a separator character", ["cut", "awk"]),
    ("turn lowercase letters into capitals, or delete particular characters", ["tr"]),
    ("cut a huge file into pieces of a fixed size", ["split", "csplit"]),
    ("give an existing file a second name that refers to it", ["ln"]),
    ("change who is allowed to read, write or execute a file", ["chmod"]),
    ("hand a file over to a different user and group", ["chown"]),
    ("tell what kind of data a file holds, whatever its name", ["file"]),
    ("stop a command when it runs longer than a limit", ["timeout"]),
    ("keep a program running after I log out of the terminal", ["nohup", "tmux"]),
    ("run a job with a lower scheduling priority so the machine stays responsive", ["nice", "renice", "ionice", "chrt"]),
    ("end a misbehaving process by sending it a signal", ["kill", "pkill", "killall"]),
    ("list the programs currently running on the machine", ["ps", "top"]),
    ("how much RAM is in use and how much is still available", ["free", "top"]),
    ("how long has the computer been on since it last started", ["uptime", "top"]),
    ("log into a remote computer securely over the network", ["ssh"]),
    ("copy files to another computer over an encrypted connection", ["scp"]),
    ("download a file from a web address", ["curl", "wget"]),
    ("which network ports have programs waiting for connections", ["ss", "lsof"]),
    ("rerun a command every few seconds and show its output full screen", ["watch"]),
    ("build command lines from the items read on standard input", ["xargs"]),
    ("send output to the screen and to a file at the same time", ["tee"]),
    ("print the numbers from one to ten, one per line", ["seq"]),
    ("put the lines of a file in random order", ["shuf"]),
    ("break an integer into its prime divisors", ["factor"]),
    ("do arithmetic with many decimal places from the shell", ["bc", "expr"]),
    ("make sure a downloaded file was not corrupted by comparing its digest", ["sha256sum", "md5sum"]),
    ("turn binary data into printable characters so it can be pasted into an email", ["base64"]),
    ("wrap long lines so that they fit within a given width", ["fold", "fmt"]),
    ("line text up into neat aligned columns like a table", ["column"]),
    ("show the raw bytes of a file in hexadecimal", ["od", "hexdump"]),
    ("find the readable text hidden inside a compiled program", ["strings"]),
    ("get the absolute form of a path with symbolic links resolved", ["realpath", "readlink"]),
    ("overwrite a file several times so its contents cannot be recovered", ["shred"]),
    ("attach a filesystem on a device to a folder of the directory tree", ["mount"]),
    ("list the disks and partitions attached to the computer", ["lsblk"]),
    ("read the messages the kernel printed while the system was booting", ["dmesg"]),
    ("make sure only one copy of a script runs at a time by holding a lock", ["flock"]),
    ("print a file with its last line first", ["tac"]),
    ("convert text from one character encoding to another", ["iconv"]),
    ("recompile only the parts of a program whose sources changed", ["make", "cmake"]),
    ("apply a set of changes produced by a comparison tool to the original files", ["patch"]),
    ("which shared libraries does a program need when it starts", ["ldd"]),
    ("trace the system calls a program makes", ["strace"]),
    ("find memory leaks in a program", ["valgrind"]),
    ("record everything shown in a terminal session to a file", ["script"]),
    ("which processor architecture does this machine have and how many cores", ["lscpu", "uname"]),
    ("find a running process by name and get its number", ["pgrep", "ps"]),
    ("copy a disk image block by block onto a USB stick", ["dd"]),
    ("show large numbers in units people can read, such as 1K or 2M", ["numfmt"]),
    ("replace tab characters by spaces", ["expand"]),
    ("pin a process to particular processors", ["taskset"]),
    ("find where the program a command runs is located", ["which", "whereis"]),
    ("search the short descriptions of the manual for a keyword", ["apropos", "man"]),
    ("create a new login account on the system", ["useradd"]),
    ("force someone to choose a new password after a number of days", ["chage", "passwd"]),
    ("list the functions and variables defined in an object file", ["nm"]),
    ("turn the machine code of an executable back into assembly", ["objdump"]),
    ("bundle object files into a static library", ["ar"]),
]


# Short notes of a small team's handbook: a few lines each, and two questions
# per note in other words than the note's own.
NOTES: dict[str, tuple[str, tuple[str, str]]] = {
    "notes/vacation.md": (
        "# Time off\n\nAsk for leave in the HR portal at least two weeks ahead. Your manager approves it;\n"
        "unused days carry over until the end of March, then they expire.\n",
        ("how far in advance must I request holidays", "what happens to the days off I did not take this year"),
    ),
    "notes/expenses.md": (
        "# Expenses\n\nKeep every receipt. Submit claims within 30 days through the finance form; travel over\n"
        "500 euros needs a director's signature. Reimbursement arrives with the next salary.\n",
        ("how do I get my money back after paying for a work trip", "who must sign off on a costly journey"),
    ),
    "notes/oncall.md": (
        "# On-call rota\n\nEach engineer carries the pager for one week, Monday to Monday. Acknowledge a page within\n"
        "fifteen minutes; if you cannot, escalate to the secondary. Swaps go in the shared calendar.\n",
        ("who answers alerts at night this week", "I cannot respond to an emergency notification, what should I do"),
    ),
    "notes/deploy.md": (
        "# Releasing\n\nMerge to main, wait for the pipeline to turn green, then promote the build from staging to\n"
        "production with the release button. Never ship on Fridays after noon.\n",
        ("steps to put a new version live for customers", "is there a day when pushing changes out is forbidden"),
    ),
    "notes/backup.md": (
        "# Backups\n\nDatabases are snapshotted every night at 02:00 and copies are kept for 35 days in another\n"
        "region. Restores are rehearsed each quarter.\n",
        ("how long are old copies of the data retained", "when is the nightly copy of the data made"),
    ),
    "notes/password.md": (
        "# Credentials\n\nUse the company vault for every secret. Passphrases need sixteen characters at least, and\n"
        "two-factor authentication is mandatory on all accounts.\n",
        ("where should I store an API token", "how long must a login phrase be"),
    ),
    "notes/onboarding.md": (
        "# First week\n\nA newcomer gets a laptop, a buddy and a checklist. Day one: accounts and tools; day two:\n"
        "a walk through the architecture; by Friday, a first small change merged.\n",
        ("what does a new hire do in their first days", "who helps someone who just joined the team"),
    ),
    "notes/meetings.md": (
        "# Rituals\n\nStand-up is at 9:30, fifteen minutes, cameras optional. Planning happens every other\n"
        "Tuesday; the retrospective closes each sprint.\n",
        ("at what time is the daily sync", "when do we look back on how the iteration went"),
    ),
    "notes/coffee.md": (
        "# Kitchen\n\nThe espresso machine is descaled on Wednesdays. Label your food in the fridge; anything\n"
        "unlabelled is thrown away on Friday evening.\n",
        ("why did my lunch disappear from the refrigerator", "when is the coffee maker cleaned"),
    ),
    "notes/parking.md": (
        "# Getting here\n\nBikes go in the basement rack. Car spaces are booked the day before with the reception;\n"
        "visitors get a badge at the front desk.\n",
        ("where can I leave my bicycle", "how do guests get into the building"),
    ),
    "notes/security.md": (
        "# Reporting a vulnerability\n\nMail security@ with the details and do not open a public ticket. We answer within\n"
        "two working days and credit the reporter once the fix is out.\n",
        ("I found a hole in our product, who do I tell", "how quickly will the team reply to a disclosed flaw"),
    ),
    "notes/logging.md": (
        "# Logs\n\nServices write structured JSON lines to stdout; the collector ships them to the search\n"
        "cluster, where they are kept two weeks. Never log personal data.\n",
        ("where do the diagnostic messages of our services end up", "can customer names appear in traces we print"),
    ),
    "notes/review.md": (
        "# Code review\n\nEvery change needs one approval from someone who did not write it. Keep pull requests\n"
        "under 400 lines; reviewers answer within a day.\n",
        ("how many people must accept a patch before merging", "how big may a proposed change be"),
    ),
    "notes/incidents.md": (
        "# Outages\n\nDeclare an incident in the chat channel, name a commander, post updates every thirty\n"
        "minutes. A blameless write-up follows within five days.\n",
        ("the site is down, what is the first thing to do", "after a failure, when is the report due"),
    ),
    "notes/hardware.md": (
        "# Equipment\n\nLaptops are replaced every three years. A broken screen or keyboard goes to the IT desk,\n"
        "which lends a spare machine meanwhile.\n",
        ("my computer display cracked, where do I take it", "how often do we get new notebooks"),
    ),
    "notes/remote.md": (
        "# Working from home\n\nUp to three days a week away from the office. Be reachable between 10 and 16 and set\n"
        "your status when you step away.\n",
        ("how many days may I work outside the office", "during which hours must I be available"),
    ),
    "notes/training.md": (
        "# Learning budget\n\nEveryone has 1,000 euros a year for courses, books and conferences, and two days to\n"
        "attend them. Share what you learned at a lunch talk.\n",
        ("can the company pay for a class I want to take", "is there money for going to a tech event"),
    ),
    "notes/dependencies.md": (
        "# Third-party libraries\n\nAdd a package only after checking its licence and upkeep. The bot proposes upgrades\n"
        "weekly; pin versions in the lock file.\n",
        ("what should I verify before pulling in an outside module", "who suggests newer releases of the packages we use"),
    ),
    "notes/accessibility.md": (
        "# Accessibility\n\nEvery screen must work with a keyboard alone and with a screen reader. Contrast follows\n"
        "WCAG AA; images carry alternative text.\n",
        ("how do we make the interface usable by blind people", "what colour contrast level do we target"),
    ),
    "notes/feedback.md": (
        "# Growth talks\n\nManagers meet each report monthly, one to one. Reviews happen twice a year, with\n"
        "peers' input collected a week before.\n",
        ("how often do I sit down alone with my boss", "when are performance evaluations held"),
    ),
}


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


def manual() -> Corpus:
    """The manual pages of MANUAL_PAGES this machine has, ``man/<page>.txt`` each,
    rendered by `man` 80 columns wide (none when `man` is missing)."""
    import os
    import shutil
    import subprocess

    from concurrent.futures import ThreadPoolExecutor

    environment = dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")

    def render(page: str) -> str:
        run = subprocess.run(["man", "-P", "cat", page], capture_output=True, env=environment, check=False)
        text = run.stdout.decode("utf-8", errors="replace") if run.returncode == 0 else ""
        return re.sub(".\x08", "", text)  # overstruck bold and underlined letters

    files: dict[str, str] = {}
    if shutil.which("man"):
        with ThreadPoolExecutor(8) as pool:
            for page, text in zip(MANUAL_PAGES, pool.map(render, MANUAL_PAGES)):
                if text.strip():
                    files[f"man/{page}.txt"] = text
    questions = [(question, [f"man/{page}.txt" for page in pages]) for question, pages in MANUAL_QUESTIONS]
    return Corpus("manual", files, questions)


def notes(count: int | None = None) -> Corpus:
    """NOTES (the first ``count`` of them), ``notes/<topic>.md`` each."""
    chosen = list(NOTES.items())[:count]
    files = {path: text for path, (text, _) in chosen}
    questions = [(question, [path]) for path, (_, asked) in chosen for question in asked]
    return Corpus("notes" if count is None else "few-notes", files, questions)


def few_notes() -> Corpus:
    return notes(5)


def packages() -> Corpus:
    """The installed Debian packages' long descriptions, ``packages/<name>.txt``
    each, asked by their summaries (each summary once; none without dpkg)."""
    status = Path("/var/lib/dpkg/status")
    text = status.read_text(encoding="utf-8", errors="replace") if status.is_file() else ""
    files: dict[str, str] = {}
    questions: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for stanza in text.split("\n\n"):
        name = summary = None
        body: list[str] = []
        in_description = False
        for line in stanza.splitlines():
            if line.startswith("Package:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("Description:"):
                summary, in_description = line.split(":", 1)[1].strip(), True
            elif in_description and line.startswith(" "):
                body.append("" if line.strip() == "." else line.strip())
            else:
                in_description = False
        # Packages of one source often share a summary: asked once, it would have several answers.
        if not name or not summary or len(body) < 2 or summary.lower() in seen:
            continue
        seen.add(summary.lower())
        files[f"packages/{name}.txt"] = "\n".join(body) + "\n"
        questions.append((summary, [f"packages/{name}.txt"]))
    return Corpus("packages", files, questions)


CORPORA = {
    "reference": reference,
    "stdlib": stdlib,
    "manual": manual,
    "notes": notes,
    "few-notes": few_notes,
    "packages": packages,
}
