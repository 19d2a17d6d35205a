"""The ``textsift`` command line: run a stage, render dvc.yaml, inspect params, make demo data.

Errors textsift raises on purpose print one clear message and exit with status 2; they name
keys, files and record ids, never document text.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import typer

from textsift.entry_point import prepare_process

prepare_process()

from textsift.chunked import CHUNK_DOCS  # noqa: E402
from textsift.config import Params, load_params  # noqa: E402
from textsift.errors import ConfigError, TextsiftError  # noqa: E402

app = typer.Typer(help="textsift: privatize text corpora and measure what each setting costs.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
dvc_app = typer.Typer(help="DVC pipeline file.", no_args_is_help=True)
params_app = typer.Typer(help="params.yaml schema and validation.", no_args_is_help=True)
key_app = typer.Typer(help="The project's secret key (the randomness of every released draw).", no_args_is_help=True)
app.add_typer(dvc_app, name="dvc")
app.add_typer(params_app, name="params")
app.add_typer(key_app, name="key")


def _fail(err: TextsiftError) -> None:
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(2)


@app.command()
def stage(
    name: str = typer.Argument(..., help="stage name, as in dvc.yaml"),
    key: str | None = typer.Option(None, help="fan-out key of a foreach stage (privacy setting name)"),
    root: Path = typer.Option(Path("."), help="project folder"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml)"),
    parent_run_id: str | None = typer.Option(None, envvar="TEXTSIFT_PARENT_RUN_ID",
                                             help="MLflow parent run id"),
) -> None:
    """Run one pipeline stage (what `dvc repro` calls); fails at once while a pipeline run holds the project."""
    from textsift.locks import project_run
    from textsift.runner import run_stage

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        with project_run(root.resolve()):
            metrics = run_stage(name, root=root, params_path=params, key=key, parent_run_id=parent_run_id)
    except TextsiftError as err:
        _fail(err)
    typer.echo(json.dumps(metrics, indent=2, sort_keys=True, default=float))


@app.command()
def stages(params: Path = typer.Option(Path("params.yaml"))) -> None:
    """List the stage instances in run order."""
    from textsift.registry import instances

    try:
        loaded = load_params(params)
    except TextsiftError as err:
        _fail(err)
    listed = instances(loaded)
    width = max(len(inst.name) for inst in listed) + 2  # a long setting name still leaves a gap before the summary
    for inst in listed:
        gpu = " [gpu]" if inst.stage.gpu else ""
        typer.echo(f"{inst.name:{width}s}{inst.stage.summary}{gpu}")


@dvc_app.command("render")
def dvc_render(
    params: Path = typer.Option(Path("params.yaml")),
    output: Path = typer.Option(Path("dvc.yaml")),
    check: bool = typer.Option(False, help="exit 1 if a file on disk differs instead of writing"),
) -> None:
    """Write dvc.yaml from the stage registry and dvc.params.yaml (the validated params DVC tracks) beside it."""
    from textsift.corpus import atomic_path
    from textsift.dvc_render import PARAMS_FILE, render_params_text, render_text

    try:
        if not params.exists():  # rendering from the embedded defaults would silently drop every setting
            raise ConfigError(f"{params} not found: run from the project root or pass --params")
        loaded = load_params(params)
    except TextsiftError as err:
        _fail(err)
    files = {output: render_text(loaded), output.parent / PARAMS_FILE: render_params_text(loaded)}
    if check:
        stale = [str(f) for f, text in files.items() if not f.exists() or f.read_text(encoding="utf-8") != text]
        if stale:
            typer.echo(f"{', '.join(stale)} out of date: run `textsift dvc render`", err=True)
            raise typer.Exit(1)
        typer.echo(f"{output} and {PARAMS_FILE} are up to date")
        return
    for path, text in files.items():
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {path}")


@dvc_app.command("params")
def dvc_params(
    params: Path = typer.Option(Path("params.yaml")),
    dvc_file: Path = typer.Option(Path("dvc.yaml")),
) -> None:
    """DVC's first stage: validate params.yaml, refuse a stale dvc.yaml, write dvc.params.yaml.

    Fails before DVC runs (and deletes the outputs of) any other stage."""
    from textsift.corpus import atomic_path
    from textsift.dvc_render import PARAMS_FILE, render_params_text, stale_reason

    try:
        loaded = load_params(params)
        reason = stale_reason(loaded, dvc_file.read_text(encoding="utf-8") if dvc_file.exists() else "")
        if reason:
            raise ConfigError(f"{dvc_file} was rendered from other params ({reason}): "
                              f"run `textsift dvc render`, then `dvc repro`")
    except TextsiftError as err:
        _fail(err)
    target = dvc_file.parent / PARAMS_FILE
    text = render_params_text(loaded)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        with atomic_path(target) as tmp:
            tmp.write_text(text, encoding="utf-8")
    typer.echo(f"{params} is valid and {dvc_file} matches it")


@params_app.command("schema")
def params_schema() -> None:
    """Print the JSON schema of params.yaml."""
    typer.echo(json.dumps(Params.model_json_schema(), indent=2))


@params_app.command("reference")
def params_reference(
    output: Path = typer.Option(Path("docs/CONFIGURATION.md")),
    check: bool = typer.Option(False, help="exit 1 if the file on disk differs instead of writing"),
) -> None:
    """Write the configuration reference (every params.yaml key, its type, default and meaning) from the models."""
    from textsift.config_reference import render_reference
    from textsift.corpus import atomic_path

    text = render_reference()
    if check:
        if not output.exists() or output.read_text(encoding="utf-8") != text:
            typer.echo(f"{output} is stale: run `textsift params reference`", err=True)
            raise typer.Exit(1)
        return
    with atomic_path(output) as tmp:
        tmp.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}")


@params_app.command("check")
def params_check(params: Path = typer.Argument(Path("params.yaml"))) -> None:
    """Validate a params file; print the effective values as dotted keys."""
    from textsift.config import flatten

    try:
        loaded = load_params(params)
    except TextsiftError as err:
        _fail(err)
    for key, value in flatten(loaded).items():
        typer.echo(f"{key} = {value}")


@key_app.command("show")
def key_show(root: Path = typer.Option(Path("."), help="project folder")) -> None:
    """Print the fingerprint of the project's key (creating the key on a fresh project); never the key."""
    from textsift import secret_key

    try:
        key = secret_key.ensure(root)
    except TextsiftError as err:
        _fail(err)
    typer.echo(f"secret key {key.fingerprint} (from {secret_key.origin()})")


@key_app.command("rotate")
def key_rotate(root: Path = typer.Option(Path("."), help="project folder")) -> None:
    """Replace the key file with a new key (the old one is retired: it still opens old vaults, and never draws
    again): dvc repro and the flow then re-make every output drawn with the key."""
    from textsift import secret_key

    try:
        old, key = secret_key.rotate(root)
    except TextsiftError as err:
        _fail(err)
    typer.echo(f"secret key {old or 'none'} -> {key.fingerprint}. The old key is kept in {secret_key.RETIRED_DIR}/ "
               "(pseudonyms already shared can still be revealed). Privatized corpora, noisy embeddings, vaults and "
               "the evaluation are stale until the pipeline runs again: `make run` or `dvc repro`; publish them "
               "again only as new releases.")


@app.command()
def promote(
    setting: str = typer.Argument(..., help="the privatize setting whose model version becomes @recommended"),
    run: str = typer.Option(..., help="the pipeline run that evaluated it (MLflow parent run id)"),
    reason: str = typer.Option(..., help="why: recorded with the move"),
    accept_failing: bool = typer.Option(False, help="promote a setting that failed the recommendation rule"),
    root: Path = typer.Option(Path("."), help="project folder"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml)"),
) -> None:
    """Move the registered model's @recommended alias to SETTING's version from RUN (a run only proposes)."""
    from textsift.promote import promote as move
    from textsift.tracking import Tracker

    try:
        loaded = load_params(params or root / "params.yaml")
        tracker = Tracker(loaded.tracking, root.resolve())
        done = move(tracker, loaded.tracking.registered_model, setting, run, reason, accept_failing,
                    privatizer=loaded.tracking.registered_privatizer)
    except TextsiftError as err:
        _fail(err)
    served = f"; its privatizer: version {done.privatizer_version}" if done.privatizer_version else ""
    typer.echo(f"{done.name}@recommended -> version {done.version} ({done.setting}; was "
               f"{done.previous or 'unset'}){served}, by {done.by} at {done.at}")


@app.command()
def serve(
    model: str = typer.Option("models:/textsift-privatizer@recommended", help="the privatizer to serve"),
    host: str = typer.Option("127.0.0.1"),
    port: int = typer.Option(8080),
    token_env: str = typer.Option("TEXTSIFT_SERVE_TOKEN", help="environment variable holding the bearer token"),
    max_bytes: int = typer.Option(1_000_000, min=1, help="largest request body (of a stream: largest line)"),
    max_records: int = typer.Option(1_000, min=1, help="most records in one request (privatized as one batch)"),
    max_stream_bytes: int = typer.Option(256 << 20, min=1, help="largest body of POST /privatize/stream (NDJSON, "
                                                              "privatized max-records at a time)"),
    rate_limit: int = typer.Option(60_000, min=0, help="most records a token may have privatized per minute (0: any)"),
    audit_log: Path = typer.Option(Path(".textsift/serve/audit.jsonl"),
                                   help="one JSON line per request: time, token digest, status, records (no text)"),
    root: Path = typer.Option(Path("."), help="project folder (its MLflow store)"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml)"),
) -> None:
    """Serve a registered privatizer over HTTP: POST /privatize, /privatize/stream (NDJSON) and /analyze with a bearer
    token; GET /health and /metrics.

    The secret key comes from $TEXTSIFT_SECRET_KEY (never from the model)."""
    import os

    import uvicorn

    from textsift import secret_key
    from textsift.promote import check_promoted
    from textsift.serving.app import OPTIONAL_COLUMNS, create_app
    from textsift.serving.model import load_privatizer, served_copy
    from textsift.tracking import Tracker

    with served_copy() as copy:  # removed on shutdown, SIGTERM and failed starts
        try:
            token = os.environ.get(token_env, "")
            if len(token) < 16:
                raise ConfigError(f"set ${token_env} to a bearer token of at least 16 characters")
            tracker = Tracker(load_params(params or root / "params.yaml").tracking, root.resolve())
            check_promoted(tracker, model)  # @recommended where promote put it, not moved in the UI
            loaded, setting = load_privatizer(tracker.download_model(model, copy))
            key = secret_key.load(root.resolve())
            assert key is not None  # load_privatizer refused to load without one
        except TextsiftError as err:
            _fail(err)
        typer.echo(f"serving {model} (setting {setting}, key {key.fingerprint}) on http://{host}:{port}/privatize")
        audit = audit_log if audit_log.is_absolute() else root.resolve() / audit_log
        app_ = create_app(loaded, token, setting, key.fingerprint, max_bytes, max_records, rate_limit, audit,
                          analyzer=loaded.unwrap_python_model().analyze,
                          takes=frozenset(loaded.metadata.get_input_schema().input_names()) & OPTIONAL_COLUMNS,
                          max_stream_bytes=max_stream_bytes)
        uvicorn.run(app_, host=host, port=port, log_level="warning")


@app.command()
def reveal(
    setting: str = typer.Option(..., help="a privatize setting with vault: true"),
    pseudonym: str = typer.Option(..., help="the stand-in to trace back (case-insensitive)"),
    doc_id: str | None = typer.Option(None, help="only this document (a corpus-scope pseudonym recurs)"),
    root: Path = typer.Option(Path("."), help="project folder"),
) -> None:
    """Authorised re-identification: the originals a pseudonym replaced, from the vault sealed with the key.

    Prints JSON lines (doc_id, label, pseudonym, original). Only the secret key's holder can open a vault.
    """
    from textsift import secret_key
    from textsift.catalog import path as catalog_path
    from textsift.vault import reveal as trace
    from textsift.vault import sealed_with, unseal

    vault = root / catalog_path("vault", setting)
    try:
        if not vault.is_file():
            raise ConfigError(f"{vault}: no vault (run privatize@{setting} with vault: true)")
        blob = vault.read_bytes()
        ring = secret_key.keyring(root)
        if not ring:
            raise ConfigError(f"no secret key here (${secret_key.ENV} or {secret_key.KEY_FILE}): the vault stays shut")
        sealer = sealed_with(blob)
        key = ring.get(sealer, list(ring.values())[-1])  # a retired key opens what it sealed; else the current one
        found = trace(unseal(blob, setting, key), pseudonym, doc_id)
    except TextsiftError as err:
        _fail(err)
    for row in found:
        typer.echo(json.dumps(row, ensure_ascii=False))
    if not found:
        typer.echo(f"no {pseudonym!r} in the vault of {setting}", err=True)
        raise typer.Exit(1)


NO_LABEL_FIELD = "none"


def _source(path: Path, fmt: str, text_field: str, label_field: str, id_field: str | None,
            spans_field: str | None):
    """The file source of an ad-hoc command; ``--label-field none`` means there is no label column."""
    from textsift.ingest_params import SourceParams

    label = None if label_field.strip().lower() == NO_LABEL_FIELD else label_field
    return SourceParams(kind="file", path=str(path), format=fmt, text_field=text_field, label_field=label,
                        id_field=id_field, spans_field=spans_field)


@app.command()
def privatize(
    input_path: Path = typer.Option(..., "--input", help="CSV/TSV/JSONL/Parquet file to privatize"),
    setting: str = typer.Option(..., help="name of an entry of privatize.settings"),
    output: Path = typer.Option(..., help="where to write the privatized file: .csv, .tsv, .jsonl (.gz allowed) "
                                          "or .parquet; rejected records go to <output>.rejects.parquet"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml); also used to "
                                                  "build missing models and indexes"),
    root: Path = typer.Option(Path("."), help="project whose models and indexes are reused"),
    fmt: str = typer.Option("auto", "--format"),
    text_field: str = typer.Option("text"),
    label_field: str = typer.Option("label", help="label column, or 'none' for unlabelled input"),
    id_field: str | None = typer.Option(None),
    spans_field: str | None = typer.Option(None),
    chunk_docs: int = typer.Option(CHUNK_DOCS, min=1, help="records privatized and written at a time (memory holds one "
                                                       "chunk; DataSifterText takes the whole file at once)"),
) -> None:
    """Privatize any file with a named setting, reusing (or training) the pipeline's models.

    The file is streamed: read twice (validate and split, then privatize chunk by chunk), never held whole; the
    output appears only when complete."""
    from textsift.adhoc import privatize_file, rejects_path

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        source = _source(input_path, fmt, text_field, label_field, id_field, spans_field)
        metrics = privatize_file(input_path, output, setting, params or root / "params.yaml", root.resolve(), source,
                                 chunk_docs)
    except TextsiftError as err:
        _fail(err)
    typer.echo(json.dumps(metrics, indent=2, sort_keys=True, default=float))
    typer.echo(f"wrote {output}; rejected records: {rejects_path(output)}")


@app.command()
def detect(
    input_path: Path = typer.Option(..., "--input", help="CSV/TSV/JSONL/Parquet file to scan"),
    output: Path = typer.Option(..., help="spans per record: .jsonl, .jsonl.gz or .parquet; rejected records "
                                          "go to <output>.rejects.parquet"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml); also used to "
                                                  "train the detector when the project has none"),
    root: Path = typer.Option(Path("."), help="project whose detector is used"),
    with_text: bool = typer.Option(False, "--with-text", help="also write each span's string (sensitive!)"),
    interests: bool = typer.Option(False, "--interests", help="also infer each record's interest and where its "
                                                              "evidence is (the IPI model, METHODS.md 4.2)"),
    device: str | None = typer.Option(None, help="cpu, cuda or auto (default: params' device)"),
    threshold: float | None = typer.Option(None, help="one confidence in (0, 1] every span needs, for this run "
                                                      "(default: params detection.threshold/thresholds)"),
    labels: list[str] | None = typer.Option(None, "--label", help="keep only this type (repeat for several)"),
    fmt: str = typer.Option("auto", "--format"),
    text_field: str = typer.Option("text"),
    id_field: str | None = typer.Option(None),
) -> None:
    """Find privacy entities (names, places, e-mails, ids...) in a file with the project's detector."""
    from textsift.adhoc import rejects_path
    from textsift.detect import detect_file

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        source = _source(input_path, fmt, text_field, NO_LABEL_FIELD, id_field, None)
        metrics = detect_file(input_path, output, source, params or root / "params.yaml", root.resolve(),
                              with_text=with_text, device=device, interests=interests, threshold=threshold,
                              labels=labels or None)
    except TextsiftError as err:
        _fail(err)
    typer.echo(json.dumps(metrics, indent=2, sort_keys=True, default=float))
    typer.echo(f"wrote {output}; rejected records: {rejects_path(output)}")


@app.command()
def embed(
    input_path: Path = typer.Option(..., "--input", help="CSV/TSV/JSONL/Parquet file to embed"),
    setting: str = typer.Option(..., help="name of an entry of embedding_dp.settings"),
    output: Path = typer.Option(..., help="noisy embeddings (.parquet: doc_id, split, label, embedding); rejected "
                                          "records go to <output>.rejects.parquet"),
    params: Path | None = typer.Option(None, help="params file (default <root>/params.yaml); also used to build "
                                                  "the fit when the project has none"),
    root: Path = typer.Option(Path("."), help="project whose detector, encoder and fitted budgets are used"),
    device: str | None = typer.Option(None, help="cpu, cuda or auto (default: params' device)"),
    fmt: str = typer.Option("auto", "--format"),
    text_field: str = typer.Option("text"),
    label_field: str = typer.Option(NO_LABEL_FIELD, help="label column to carry over (default: none)"),
    id_field: str | None = typer.Option(None),
) -> None:
    """Publish noisy sentence embeddings of a file with a setting's fitted per-dimension budgets (METHODS.md §3)."""
    from textsift.adhoc import rejects_path
    from textsift.embed import embed_file

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        source = _source(input_path, fmt, text_field, label_field, id_field, None)
        metrics = embed_file(input_path, output, setting, source, params or root / "params.yaml", root.resolve(),
                             device=device)
    except TextsiftError as err:
        _fail(err)
    typer.echo(json.dumps(metrics, indent=2, sort_keys=True, default=float))
    typer.echo(f"wrote {output}; rejected records: {rejects_path(output)}")


@app.command()
def evaluate(
    original: Path = typer.Option(..., help="the original file"),
    privatized: Path = typer.Option(..., help="its privatized version (same ids)"),
    params: Path = typer.Option(Path("params.yaml")),
    output: Path | None = typer.Option(None, help="also write the metrics as JSON here"),
    fmt: str = typer.Option("auto", "--format"),
    text_field: str = typer.Option("text"),
    label_field: str = typer.Option("label", help="label column, or 'none' (privacy metrics only)"),
    id_field: str | None = typer.Option(None),
    spans_field: str | None = typer.Option(None, help="privacy spans of the original, for leak rates"),
) -> None:
    """Utility and leak metrics of a privatized file against its original."""
    from textsift.adhoc import evaluate_files, read_file_corpus
    from textsift.corpus import write_json

    try:
        loaded = load_params(params)
        orig_source = _source(original, fmt, text_field, label_field, id_field, spans_field)
        orig = read_file_corpus(original, orig_source, loaded)
        priv_source = _source(privatized, fmt, text_field, label_field, id_field or "id", None)
        priv = read_file_corpus(privatized, priv_source, loaded)
        metrics = evaluate_files(orig, priv, loaded, labelled=orig_source.label_field is not None)
    except TextsiftError as err:
        _fail(err)
    if output:
        write_json(metrics, output)
    typer.echo(json.dumps(metrics, indent=2, sort_keys=True, default=float))


@app.command()
def demo(
    out: Path = typer.Option(Path("demo.jsonl"), help="JSONL file to write"),
    n_docs: int = typer.Option(2000, help="documents"),
    seed: int = typer.Option(1234, help="seed"),
) -> None:
    """Write the seeded demo corpus (planted personal data with gold spans) as JSONL."""
    from textsift.demo import generate_demo, write_demo_jsonl
    from textsift.ingest_params import DemoCorpusParams

    records = generate_demo(DemoCorpusParams(n_docs=n_docs), seed)
    write_demo_jsonl(records, out)
    typer.echo(f"wrote {len(records)} documents to {out}")


def main() -> None:
    """The ``textsift`` console script and ``python -m textsift``.

    A ``textsift stage`` that succeeded leaves without the interpreter's teardown (``os._exit``): unloading
    torch, transformers, MLflow and Great Expectations took 2-3 s of each stage process, and `dvc repro` starts
    one process per stage. By then its outputs are written atomically, its MLflow run has ended and its project
    lock is released; standard streams and log handlers are flushed first. Every other command, and a stage
    that failed, exits normally.
    """
    try:
        app(prog_name="textsift")
    except SystemExit as done:
        if sys.argv[1:2] == ["stage"] and done.code in (None, 0):
            sys.stdout.flush()
            sys.stderr.flush()
            logging.shutdown()
            os._exit(0)
        raise
