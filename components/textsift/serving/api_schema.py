"""The served API's request and response shapes, for ``GET /openapi.json`` only.

``textsift.serving.app`` parses bodies itself (its error contract: a 422 naming the record, never its text), so
these models describe, they do not validate; ``tests/unit/test_serving_app.py`` keeps their fields equal to the
fields the parser accepts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Record(BaseModel):
    """One document of a request."""

    id: str | int | None = Field(None, description="names the row in the answer (keys no draw); all records or none")
    text: str = Field(description="the document, as it is: the answer differs from it only inside replaced spans")


class Body(BaseModel):
    """``POST /privatize`` and ``POST /analyze``."""

    records: list[Record] = Field(min_length=1, description="at most --max-records, at most --max-bytes in all")
    entities: list[str] | None = Field(
        None, description="entity types and groups (direct, quasi, all) to protect; they must include the served "
                          "setting's own")
    threshold: float | None = Field(
        None, ge=0.02, le=1, description="no entity type detected at a confidence threshold above this, taken down to "
                                         "0.02, 0.05, 0.1, 0.2, 0.3, 0.5 or 1 (the served thresholds are the most a "
                                         "request may use: it may find more, never less)")
    operators: dict[str, str] | None = Field(
        None, description="/privatize only: entity type -> placeholder, hash, pseudonym or mask, what replaces that "
                          "type; each reveals no more than the served setting's own (a placeholder no more than any, a "
                          "hash no more than a pseudonym; a mask only a placeholder or a mask)")


class Entity(BaseModel):
    """A span: in /analyze, offsets into the text as sent; in /privatize's ``replaced``, into the answered text. No
    score."""

    start: int
    end: int
    type: str


class Privatized(BaseModel):
    """One answered record of ``/privatize``."""

    id: str
    text: str
    epsilon: float | None = Field(None, description="what this record spent (differentially private settings)")
    replaced: list[Entity] | None = Field(None, description="where each stand-in lies in the answered text, and the "
                                                            "type it replaced (settings that replace whole regions)")


class Analyzed(BaseModel):
    """One answered record of ``/analyze``."""

    id: str
    entities: list[Entity]


class PrivatizeAnswer(BaseModel):
    records: list[Privatized]


class AnalyzeAnswer(BaseModel):
    records: list[Analyzed]


class ErrorAnswer(BaseModel):
    error: str = Field(description="what is wrong, never the text")


def inlined(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema with every ``$ref`` replaced by the definition it names: in an OpenAPI document a
    ``#/...`` reference points at the document's root, not at the schema's ``$defs``."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return resolve(definitions[node["$ref"].rsplit("/", 1)[1]])
            return {key: resolve(value) for key, value in node.items()}
        return [resolve(item) for item in node] if isinstance(node, list) else node

    return resolve(schema)


ERRORS = (("400", "not JSON, or no records"), ("401", "missing or wrong bearer token"),
          ("413", "over --max-bytes or --max-records"), ("422", "a record or field refused"),
          ("429", "over the rate limit (Retry-After)"), ("500", "a server fault"))


def operation(answer: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a POST route: its request body, the answer and the error shape (every error status)."""
    def json_content(model: type[BaseModel]) -> dict[str, Any]:
        return {"application/json": {"schema": inlined(model)}}

    return {"requestBody": {"required": True, "content": json_content(Body)},
            "responses": {"200": {"description": "one answer per record, in order", "content": json_content(answer)},
                          **{code: {"description": what, "content": json_content(ErrorAnswer)}
                             for code, what in ERRORS}}}
