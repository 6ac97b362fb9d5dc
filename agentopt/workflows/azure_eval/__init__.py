"""azd's evaluations extension (`azd ai eval`, `evals/azure.eval.yaml`; azd-eval.md): its evals
run as agentopt suites, its `--fail-on` gate, its run-output export, and datasets mined from
exported traces."""
