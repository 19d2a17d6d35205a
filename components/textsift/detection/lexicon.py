"""The shipped templates and word lists, and each locale's Faker data (METHODS.md §4.1).

``templates.txt`` (beside this module) holds the synthetic DPER sentences' templates and word
lists; Faker's per-locale data (names, cities, regions, job titles) is read once per locale,
never drawn from here: no randomness in this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from faker import Faker

TEMPLATES_RESOURCE = "templates.txt"
_SLOT = re.compile(r"\{([A-Z]+)(\d?)\}")
# Slot -> the label it gets (None: an unlabelled distractor); templates.txt documents them.
SLOTS: dict[str, str | None] = {
    **dict.fromkeys(("PERSON", "FIRST", "SURNAME"), "PERSON"),
    **dict.fromkeys(("LOC", "CITY", "ADDRESS", "COUNTRY"), "LOC"),
    **dict.fromkeys(("ORG", "COMPANY", "UNI", "HOSPITAL"), "ORG"),
    "JOB": "JOB", "EDU": "EDU", "DEGREE": "EDU", "DATE": "DATE", "DOB": "DATE",
    "EMAIL": "EMAIL", "PHONE": "PHONE", "URL": "URL",
    **dict.fromkeys(("ID", "IBAN", "SSN", "PASSPORT", "LICENCE", "ORDER", "MRN", "CARD", "PLATE"), "ID"),
    **dict.fromkeys(("PRODUCT", "FEATURE", "DRUG", "DEPT", "WEEKDAY", "PRICE", "COUNT", "NUM", "PERCENT",
                     "DURATION", "DOSE", "TIME", "VERSION", "RATING", "TEMP"), None),
}
_FORM_SLOTS = ("CITY", "LAST", "FIRST")

Part = str | tuple[str, int]  # literal text, or (slot name, index)
Template = tuple[Part, ...]


def parse_sections(content: str) -> dict[str, tuple[str, ...]]:
    """``[section]`` headers and their item lines; ``#`` comments and blanks skipped, ``\\n`` a break."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in content.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(" ".join(line[1:-1].split()), [])
        elif current is None:
            raise ValueError("templates.txt: an item before the first [section]")
        else:
            current.append(line.replace("\\n", "\n"))
    return {name: tuple(items) for name, items in sections.items()}


def compile_template(text: str, slots: tuple[str, ...] | dict[str, str | None] = SLOTS) -> Template:
    """A template as literal and (slot, index) parts; a slot name not in ``slots`` is an error."""
    pieces = _SLOT.split(text)
    parts: list[Part] = []
    for k in range(0, len(pieces), 3):
        if pieces[k]:
            parts.append(pieces[k])
        if k + 1 < len(pieces):
            if pieces[k + 1] not in slots:
                raise ValueError(f"templates.txt: unknown slot {{{pieces[k + 1]}}}")
            parts.append((pieces[k + 1], int(pieces[k + 2] or 1)))
    return tuple(parts)


@dataclass(frozen=True)
class Tables:
    """The shipped templates (``registers``: entity-template count per register) and word lists."""

    entity: tuple[Template, ...]
    none: tuple[Template, ...]
    registers: dict[str, int]
    lists: dict[str, tuple[str, ...]]


@lru_cache(maxsize=1)
def tables() -> Tables:
    """Parse ``templates.txt`` once."""
    content = resources.files(__package__).joinpath(TEMPLATES_RESOURCE).read_text(encoding="utf-8")
    sections = parse_sections(content)
    registers = {name.split()[1]: items for name, items in sections.items() if name.startswith("template ")}
    entity = tuple(compile_template(t) for name, items in registers.items() if name != "none" for t in items)
    return Tables(entity, tuple(compile_template(t) for t in registers.get("none", ())),
                  {name: len(items) for name, items in registers.items() if name != "none"}, sections)


@dataclass(frozen=True)
class LocaleData:
    """What one locale's sentences draw from (Faker's data plus the shipped lists)."""

    locale: str
    firsts: tuple[str, ...]
    lasts: tuple[str, ...]
    cities: tuple[str, ...]  # Faker's list where it has one (else Faker's ``city()`` is called)
    real_cities: tuple[str, ...]
    regions: tuple[str, ...]
    countries: tuple[str, ...]
    jobs: tuple[str, ...]
    months: tuple[str, ...]
    dates: tuple[str, ...]
    domains: tuple[str, ...]
    forms: dict[str, tuple[Template, ...]]


def _job_title(job: str) -> str:
    """Faker's "Engineer, civil (contracting)" as "civil engineer"; "" for a title to skip.

    French titles that list both genders ("serrurier dépanneur dépanneuse") keep the first form;
    those where the repetition is not adjacent are skipped.
    """
    job = re.sub(r"\s*\(.*?\)", "", job).strip()
    if ", " in job:
        head, _, tail = job.partition(", ")
        job = f"{tail} {head[:1].lower()}{head[1:]}"
    words = job.split()
    words = [w for k, w in enumerate(words) if not (k and len(w) > 4 and w[:4].lower() == words[k - 1][:4].lower())]
    stems = [w[:5].lower() for w in words if len(w) > 5]
    return " ".join(words) if len(stems) == len(set(stems)) else ""


def _provider_attr(fake: Faker, *names: str) -> tuple[str, ...]:
    for provider in fake.get_providers():
        for name in names:
            # sorted: some locales build their lists from sets (it_IT cities), in hash-seed order,
            # and draws from them are uniform, so order carries no meaning but must not vary by process
            found = tuple(sorted({v for v in getattr(provider, name, None) or () if isinstance(v, str) and v}))
            if found:
                return found
    return ()


@cache
def locale_data(locale: str) -> LocaleData:
    """Faker's data for ``locale`` (read, never drawn: no randomness here) and the shipped lists."""
    fake = Faker(locale)
    lang = locale.split("_")[0]
    lists = tables().lists

    def pick(name: str) -> tuple[str, ...]:
        return lists.get(f"{name} {locale}") or lists.get(f"{name} {lang}") or ()

    forms = {kind: tuple(compile_template(f, _FORM_SLOTS) for f in lists[kind] + pick(kind))
             for kind in ("uni_form", "hospital_form", "civic_form")}
    english = Faker("en_US") if locale != "en_US" else fake
    return LocaleData(
        locale=locale,
        firsts=_provider_attr(fake, "first_names"),
        lasts=_provider_attr(fake, "last_names"),
        cities=_provider_attr(fake, "cities"),
        real_cities=pick("city"),
        regions=_provider_attr(fake, "states", "counties", "provinces", "regions"),
        countries=tuple(c for c in _provider_attr(english, "countries") if len(c) <= 24),
        jobs=tuple(dict.fromkeys(j for j in map(_job_title, _provider_attr(fake, "jobs")) if 2 < len(j) <= 40)),
        months=lists[f"month {lang}"],
        dates=pick("date"),
        domains=pick("domain"),
        forms=forms,
    )
