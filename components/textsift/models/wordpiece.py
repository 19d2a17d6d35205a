"""A WordPiece tokenizer trained on the corpus itself (METHODS.md §1.1), so no download is needed.

BERT's uncased recipe (``tokenizers``): Unicode normalization with lower-casing and accent
stripping, splitting on whitespace and punctuation, then WordPiece with ``##`` continuation
pieces. The vocabulary is learned like ``tokenizers``' WordPiece trainer (frequency-ranked merges
of adjacent pieces, starting from single characters) but here, because that trainer breaks ties
between equally frequent merges in hash-map order and so gives a different vocabulary on every
run: ties go to the lexicographically smallest pair, which makes training reproducible.

The vocabulary is logged with the model, so it is published (ARCHITECTURE.md). Learned from every
word, it listed training documents' phone numbers and name parts verbatim, and DataSifterText drew
other people's names from it as fills (project issue #32). It is learned only from *public* words — words of the
text outside the private spans, used by at least ``min_doc_freq`` distinct documents, the rule of
an index's output vocabulary (:mod:`textsift.indexes.vocabulary`). Every other word still gives
its characters to the alphabet, as does printable ASCII, so a rare word or a name is split into
characters rather than read as ``[UNK]``; the text inside spans gives nothing.
"""

from __future__ import annotations

import heapq
import string
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import BertTokenizerFast

from textsift.corpus import CharSpan

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PREFIX = "##"


def _merge(seq: list[str], a: str, b: str, merged: str) -> list[str]:
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(merged)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def _pieces(word: str) -> list[str]:
    """``word`` split into characters: the first one, then ``##`` continuations."""
    return [word[0], *(PREFIX + c for c in word[1:])]


def learn_vocab(word_counts: dict[str, int], vocab_size: int, alphabet: Iterable[str] = ()) -> list[str]:
    """Special tokens, the character alphabet, then merged pieces, most frequent merge first.

    Args:
        word_counts: pre-tokenized (normalized) words and their corpus frequencies.
        vocab_size: stop when the vocabulary has this many entries (or no pair is left).
        alphabet: more single-character pieces (``"a"``, ``"##a"``) than those of ``word_counts``.
    """
    words = sorted(word_counts)
    counts = [word_counts[w] for w in words]
    seqs = [_pieces(w) for w in words]
    vocab = [*SPECIAL_TOKENS, *sorted({piece for seq in seqs for piece in seq} | set(alphabet))]
    known = set(vocab)
    pairs: Counter[tuple[str, str]] = Counter()
    where: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
    for i, seq in enumerate(seqs):
        for pair in zip(seq, seq[1:], strict=False):
            pairs[pair] += counts[i]
            where[pair].add(i)
    heap = [(-n, a, b) for (a, b), n in pairs.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        neg, a, b = heapq.heappop(heap)
        if -neg <= 0:
            break
        if pairs.get((a, b), 0) != -neg:
            continue  # a stale entry: this pair's count changed since it was pushed
        merged = a + b[len(PREFIX):]
        if merged not in known:  # the same piece can be reached by two different merges
            vocab.append(merged)
            known.add(merged)
        for i in sorted(where.pop((a, b))):
            old, new = seqs[i], _merge(seqs[i], a, b, merged)
            delta = Counter(zip(new, new[1:], strict=False))
            delta.subtract(Counter(zip(old, old[1:], strict=False)))
            for pair, change in delta.items():
                if change:
                    pairs[pair] += change * counts[i]
                    where[pair].add(i)
                    heapq.heappush(heap, (-pairs[pair], *pair))
            seqs[i] = new
        del pairs[(a, b)]
    return vocab


def _ascii_pieces(lowercase: bool) -> list[str]:
    """Letters (lower-case only when uncased) and digits, first and ``##`` continuation, and punctuation (always a
    word of its own): always in the alphabet, so a word made of them, a name or a number, is split into known
    pieces and never read as ``[UNK]``, whatever the public text held."""
    alphanumeric = (string.ascii_lowercase if lowercase else string.ascii_letters) + string.digits
    return [*alphanumeric, *(PREFIX + c for c in alphanumeric), *string.punctuation]


def blank_spans(text: str, spans: Iterable[CharSpan]) -> str:
    """``text`` with the characters of every span replaced by spaces: what is left is its public text."""
    chars = list(text)
    for span in spans:
        start, end = int(span.start), int(span.end)
        chars[start:end] = " " * len(chars[start:end])
    return "".join(chars)


def public_word_counts(
    texts: Sequence[str], spans: Sequence[Iterable[CharSpan]] | None, normalizer: normalizers.Normalizer,
    pre_tokenizer: pre_tokenizers.PreTokenizer,
) -> tuple[Counter[str], Counter[str]]:
    """Occurrences and document frequencies of the words of ``texts`` outside their ``spans``.

    Args:
        texts: training documents.
        spans: per document, its private spans (gold or detected); None: no span is known.
        normalizer: the tokenizer's normalizer.
        pre_tokenizer: the tokenizer's word splitter.
    """
    if spans is not None and len(spans) != len(texts):
        raise ValueError(f"public_word_counts: {len(texts)} texts but {len(spans)} span lists")
    occurrences: Counter[str] = Counter()
    documents: Counter[str] = Counter()
    for i, text in enumerate(texts):
        public = blank_spans(text, spans[i]) if spans is not None else text
        words = [w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(public))]
        occurrences.update(words)
        documents.update(set(words))
    return occurrences, documents


def train_wordpiece(texts: Sequence[str], vocab_size: int, lowercase: bool = True,
                    spans: Sequence[Iterable[CharSpan]] | None = None, min_doc_freq: int = 1) -> BertTokenizerFast:
    """Train a BERT-style WordPiece tokenizer on the public words of ``texts`` (deterministic).

    Args:
        texts: training documents (the corpus's training split).
        vocab_size: target vocabulary size, special tokens included (fewer when the corpus is small).
        lowercase: uncased vocabulary (BERT-uncased behaviour).
        spans: per document, its private spans: their text is left out entirely.
        min_doc_freq: only words used outside spans by at least this many distinct documents are merged into
            pieces; the others only add their characters.

    Returns:
        A fast tokenizer whose ``[CLS] ... [SEP]`` template matches ``BertForMaskedLM`` inputs.
    """
    if min_doc_freq < 1:
        raise ValueError(f"min_doc_freq must be >= 1 (got {min_doc_freq})")
    normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    occurrences, documents = public_word_counts(texts, spans, normalizer, pre_tokenizer)
    frequent = {w: n for w, n in occurrences.items() if documents[w] >= min_doc_freq}
    rare = [piece for w in occurrences if w not in frequent for piece in _pieces(w)]
    vocab = learn_vocab(frequent, vocab_size, alphabet=[*rare, *_ascii_pieces(lowercase)])
    core = Tokenizer(models.WordPiece({piece: i for i, piece in enumerate(vocab)}, unk_token="[UNK]"))
    core.normalizer = normalizer
    core.pre_tokenizer = pre_tokenizer
    core.decoder = decoders.WordPiece(prefix=PREFIX)
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return BertTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", do_lower_case=lowercase,
    )
