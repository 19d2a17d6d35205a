"""DataSifterText obfuscation (METHODS.md §1.4): RAKE, TextRank, partners, the replacement methods."""

from __future__ import annotations

import numpy as np
import pytest

from textsift.mechanisms.datasifter.keyphrases import candidate_runs, rake, textrank_sentences
from textsift.mechanisms.datasifter.obfuscation import obfuscate, swap_ranked, swap_tail
from textsift.mechanisms.datasifter.partners import choose_partners, cluster, pick_partner, pool_size, tfidf
from textsift.rng import generator
from textsift.word_lists import stop_words

SENTENCE = "Compatibility of systems of linear constraints over the set of natural numbers."
MINE = "I met the famous film director at the party. The garden party was nice, and the film director was late."
THEIRS = "Old stone bridges cross the harbour river. A quiet harbour town hosts the summer jazz festival every year."


def test_rake_on_a_hand_made_sentence() -> None:
    runs = candidate_runs(SENTENCE, stop_words())
    assert [r[0] for r in runs] == [("compatibility",), ("systems",), ("linear", "constraints"), ("set",),
                                    ("natural", "numbers")]
    ranked = rake(SENTENCE, stop_words())
    # degree/frequency: linear 2, constraints 2, natural 2, numbers 2, the others 1; ties by position
    assert [(k.key, k.score) for k in ranked] == [
        ("linear constraints", 4.0), ("natural numbers", 4.0), ("compatibility", 1.0), ("systems", 1.0), ("set", 1.0)
    ]
    assert ranked[0].surface(SENTENCE) == "linear constraints"


def test_rake_breaks_at_punctuation_and_records_every_occurrence() -> None:
    assert [r[0] for r in candidate_runs("red apples, green pears", stop_words())] == [
        ("red", "apples"), ("green", "pears")]
    ranked = rake(MINE, stop_words())
    # film, director: degree 5 / frequency 2; famous 3/1; party 3/2; garden 2/1; met, nice, late 1
    assert [(k.key, k.score) for k in ranked[:4]] == [
        ("famous film director", 8.0), ("film director", 5.0), ("garden party", 3.5), ("party", 1.5)]
    assert ranked[0].spans == ((MINE.index("famous"), MINE.index(" at the party")),)
    assert ranked[1].spans[0][0] == MINE.rindex("film director")


def test_textrank_ranks_sentences_with_offsets() -> None:
    text = ("The cat sat on the warm mat. The dog sat on the mat too. Birds sing songs. "
            "The cat and the dog share the warm mat.")
    ranked = textrank_sentences(text)
    assert ranked and all(text[s:e] for k in ranked for s, e in k.spans)
    assert ranked[0].score >= ranked[-1].score
    assert textrank_sentences("Just one sentence here") == []


def test_replacement_methods_on_a_hand_made_pair() -> None:
    mine, theirs = rake(MINE, stop_words()), rake(THEIRS, stop_words())
    assert theirs[0].key == "summer jazz festival every year" and theirs[1].key == "old stone bridges cross"
    one = swap_ranked(MINE, mine, THEIRS, theirs, q=1)
    assert one == MINE.replace("famous film director", "summer jazz festival every year")
    two = swap_ranked(MINE, mine, THEIRS, theirs, q=2)
    assert two == one.replace("the film director was", "the Old stone bridges cross was")
    tail = swap_tail(MINE, mine, THEIRS, theirs)
    assert tail == "I met the summer jazz festival every year."
    sentences_mine, sentences_theirs = textrank_sentences(MINE), textrank_sentences(THEIRS)
    assert len(sentences_mine) == len(sentences_theirs) == 2
    swapped = swap_ranked(MINE, sentences_mine, THEIRS, sentences_theirs, q=1)
    assert swapped.count(".") == 2 and sentences_theirs[0].surface(THEIRS) in swapped
    assert sentences_mine[0].surface(MINE) not in swapped and sentences_mine[1].surface(MINE) in swapped


def test_pool_size() -> None:
    assert [pool_size(n, 0.1) for n in (1, 9, 10, 11, 30, 1000)] == [1, 1, 1, 2, 3, 100]


def test_partner_is_in_its_cluster_and_among_the_closest_tenth() -> None:
    topics = ["football match goal team", "stock market shares price", "recipe oven flour sugar"]
    rng = generator(0, "test")
    texts = [" ".join(rng.choice(t.split() + ["word", "other", "thing"], size=12)) for t in topics for _ in range(40)]
    ids = [f"d{i}" for i in range(len(texts))]
    matrix = tfidf(texts)
    labels = cluster(matrix, 3, key=1)
    partners = choose_partners(matrix, labels, ids, key=1, max_candidates=1000, pool_frac=0.1)
    sims = (matrix @ matrix.T).toarray()
    for i, j in enumerate(partners.tolist()):
        others = np.flatnonzero((labels == labels[i]) & (np.arange(len(texts)) != i))
        assert j != i and labels[j] == labels[i]
        distances = np.sort(1 - sims[i, others])
        assert 1 - sims[i, j] <= distances[pool_size(len(others), 0.1) - 1] + 1e-12
    again = choose_partners(matrix, labels, ids, key=1, max_candidates=1000, pool_frac=0.1)
    assert np.array_equal(partners, again)


def test_pick_partner_samples_at_most_max_candidates() -> None:
    others = np.arange(100)
    similarity = np.linspace(0, 1, 100)  # document 99 is the closest
    picks = {pick_partner(others, similarity, generator(s, "t"), max_candidates=100, pool_frac=0.02)
             for s in range(30)}
    assert picks == {98, 99}
    limited = {pick_partner(others, similarity, generator(s, "t"), max_candidates=5, pool_frac=0.2)
               for s in range(30)}
    assert len(limited) > 3  # the best of 5 random candidates varies


def varied_texts(n_per_topic: int) -> list[str]:
    """Distinct two-sentence documents on three topics (random words, stop words between them)."""
    topics = ["football match goal team coach", "stock market shares price bank", "recipe oven flour sugar cake"]
    rng = generator(0, "test")
    texts = []
    for topic in topics:
        for _ in range(n_per_topic):
            a, b, c, d = rng.choice(topic.split() + ["red", "old", "new"], size=4, replace=False)
            texts.append(f"The {a} {b} was in the {c}. Then a {d} and the {b} {c} came {rng.integers(99)}.")
    return texts


@pytest.mark.parametrize("method", ["rake_keyphrase", "rake_index", "textrank"])
def test_obfuscate_replaces_most_documents_and_keeps_order(method: str) -> None:
    texts = varied_texts(6)
    ids = [f"d{i}" for i in range(len(texts))]
    result = obfuscate(texts, ids, method, q=1, k_clusters=3, max_candidates=1000, pool_frac=0.1, key=5,
                       stop_words=stop_words())
    assert len(result.texts) == len(texts) and result.replaced.mean() > 0.5
    assert all(j != i for i, j in enumerate(result.partners.tolist()))
    none = obfuscate(texts, ids, "none", 1, 3, 1000, 0.1, 5, stop_words())
    assert none.texts == texts and not none.replaced.any()
