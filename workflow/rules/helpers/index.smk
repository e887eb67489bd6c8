# Input functions of the index (workflow/rules/report.smk): the reports, the source's claims, the papers'
# world tables, and the files the papers' coverage matrices (src/itmbench/papers/<paper>/coverage.csv) name.
from itmbench.papers.coverage import coverage_outputs
from itmbench.papers.registry import PAPERS as REGISTERED_PAPERS


def produced_here(path):
    """Whether a rule of this source's workflow writes `path` (the audits are the world source's only)."""
    return any(rule.is_producer(path) for rule in workflow.rules)


def produced_by_default(path):
    """Whether the default run writes `path` (a rule of this source's workflow, but not a named target's)."""
    return any(rule.is_producer(path) for rule in workflow.rules if rule.name not in NAMED_TARGET_RULES)


def get_index_artefacts():
    """The coverage matrices' files the default run builds: the source's, and with a mirror the released source's
    (a named target's are named on the index without a link)."""
    paths = []
    for paper in REGISTERED_PAPERS:
        paths.extend(p for p in coverage_outputs(paper, SOURCE, released=RELEASED_REPORT) if produced_by_default(p))
    return list(dict.fromkeys(paths))


def get_index_tables():
    """The papers' world tables (CSV): the index shows each paper's largest differences from the published numbers."""
    return [p for paper in WORLD_PAPERS for p in world_table_paths(paper, f"{RESULTS}/tables/{paper}") if p.endswith(".csv")]


def released_claims():
    """The released files' claims table (beside the published tables'), where this run builds it (a mirror)."""
    path = "results/released/tables/claims/claims.csv"
    return [path] if RELEASED_REPORT and produced_here(path) else []


def get_index_inputs(wildcards):
    """What reports/index.html shows: every report, the claims table, the world tables and the coverage files."""
    return {
        "reports": get_reports(wildcards),
        "claims": [f"{RESULTS}/tables/claims/claims.csv", *released_claims()],
        "tables": get_index_tables(),
        "artefacts": get_index_artefacts(),
    }
