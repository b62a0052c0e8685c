"""Expected corpus is not among the case's `input.corpora`.

## What it does
With `match: corpus`, checks each value of a case's `expect.relevant` against the
corpora the case asks the target to search (`input.corpora`) and reports one the
case does not search. Cases without an `input.corpora` list are not checked: the
target then searches its own default corpora.

## Why is this bad?
A hit can only come from a corpus that was searched. An expected corpus outside
`input.corpora` is always missed, so the case's recall is capped below 1 however
good the retrieval is.

## Example
```json
{"id": "ticket-search", "input": {"query": "login fails", "corpora": ["code"]}, "expect": {"relevant": ["tickets"]}}
```

## How to fix
Add the corpus to `input.corpora`, or expect a corpus the case searches. When
most cases expect a corpus they do not search, one finding says so for the file.
"""

from ...reading.findings import Severity
from . import ROW, rule_of

RULE = rule_of(__doc__, "RAG204", "corpus-not-searched", Severity.WARNING)


@RULE.check(ROW)
def corpus_not_searched(rows):
    if "corpus" not in rows.use.matches:
        return
    for context, relevant in rows.expected:
        case_input = context.row.value.get("input")
        corpora = case_input.get("corpora") if isinstance(case_input, dict) else None
        if not isinstance(corpora, list):
            continue
        searched = [corpus for corpus in corpora if isinstance(corpus, str)]
        listed = ", ".join(repr(corpus) for corpus in searched) or "none"
        for index, value in enumerate(relevant):
            if type(value) is str and value not in searched:
                # Of every case expecting the corpus: a dataset whose judgments
                # name a corpus its queries never ask for names it on most rows.
                cause = f"corpus {value}"
                if rows.passes_over(RULE.code, cause, context.line):
                    continue
                yield RULE.finding(
                    context.value_range("expect", "relevant", index),
                    f"expected corpus {value!r} is not searched by this case (input.corpora: {listed}): "
                    "add it to input.corpora or expect a corpus the case searches",
                    cause=cause,
                )


@RULE.folds
def every_case_expects_it(cause):
    corpus = cause[len("corpus ") :]
    return (
        f"the cases expect corpus {corpus!r} but none asks to search it: most likely their `input.corpora` was "
        f"written for another target or an older set of corpora; add {corpus!r} to every case's `input.corpora`",
        None,
    )
