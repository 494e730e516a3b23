"""stems.py's English-only stemmer: the stems snowballstemmer's full package gives, without
importing its other 35 stemmers."""

from __future__ import annotations

import subprocess
import sys

import snowballstemmer
from hypothesis import given
from hypothesis import strategies as st

from engine.search.ranking.stems import content_stems, stem

# English words with Porter 2's special cases (the exceptional forms, -ly and -ing rules,
# y after a consonant, the R1 prefixes gener/commun/arsen), and the words of code queries.
WORDS = """
skies dying lying tying news innings outing canning howe proceed exceed succeed andes atlas
cosmos bias generously generate generators communication arsenal gently early only singly
consign consigned consigning consignment knack knackeries cardinality hopefulness
relational conditional rational valency digitizer operator feudalism decisiveness formality
sensitivity sensibility triplicate formative formalize electricity electrical adjustable
defensible irritant replacement adjustment dependent adoption communism activate angularity
homologous effective bowdlerize controlling rolling sizing hopping tanned falling hissing
fizzed failing filing routing router routes completions completion discovered parsing
parser serialization deserializes middleware handlers authentication authorize caching
cached indexing indexes indices queries queried retrying retries timeout timeouts
subcommands registered registry options arguments validating validators encoding decoder
streaming buffers connections connecting migrations templates rendering listeners
""".split()


def test_the_stems_are_snowballstemmers_english_stems() -> None:
    reference = snowballstemmer.stemmer("english")
    assert [stem(w) for w in WORDS] == [reference.stemWord(w) for w in WORDS]


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=14))
def test_any_lower_case_word_stems_as_the_full_package_stems_it(word: str) -> None:
    assert stem(word) == snowballstemmer.stemmer("english").stemWord(word)


def test_short_words_and_digits_stay_as_they_are() -> None:
    assert [stem(w) for w in ("ies", "was", "utf8", "v2")] == ["ies", "was", "utf8", "v2"]


def test_stemming_imports_none_of_the_other_languages() -> None:
    # In a fresh process: this one imported the full package for the reference above.
    code = (
        "import sys\n"
        "from engine.search.ranking.stems import content_stems\n"
        "assert content_stems('how are the Generators discovered') == ('generat', 'discov')\n"
        "print(sorted(m for m in sys.modules if 'stemmer' in m))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "snowballstemmer" not in out
    assert "english_stemmer" in out
    assert "german_stemmer" not in out


def test_content_stems_are_unchanged() -> None:
    assert content_stems("how are the Generators discovered") == ("generat", "discov")
    assert content_stems("parse_request_body routing HTTPHandlers") == (
        "pars",
        "request",
        "bodi",
        "rout",
        "http",
        "handler",
    )
