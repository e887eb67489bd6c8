# ECCV Caption's rules beyond its tables and headline figure (included by rules/papers.smk; its benchmark's
# own rules are rules/eccv.smk).

if len(eccv_rank_tau_models()) >= 3:

    rule eccv_rank_tau:
        input:
            unpack(get_eccv_rank_tau_scores),
        output:
            csv=f"{RESULTS}/tables/eccv/rank_tau.csv",
            md=f"{RESULTS}/tables/eccv/rank_tau.md",
            tex=f"{RESULTS}/tables/eccv/rank_tau.tex",
        params:
            flags=get_eccv_rank_tau_flags,
            score=get_score_params,
        threads: 1
        resources:
            mem_mb=4000,
        log:
            "logs/tables/eccv_rank_tau.log",
        benchmark:
            "benchmarks/rules/tables/eccv_rank_tau.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-rank-tau {params.flags} --config {params.score:q} --out-csv {output.csv} > {log} 2>&1"
