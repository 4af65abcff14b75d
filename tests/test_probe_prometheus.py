"""packaging/prometheus/probe.yml, the scrape job for ``/probe``: promtool accepts it, and a
real Prometheus running its relabelling and file_sd (TLS and basic auth left out) scrapes a
(fake) iLO through the agent, with the iLO as ``instance``."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from smartarray_agent.probe.prober import Prober

from .redfish_ilo import ILO5_TREE, Ilo, serve, tree
from .test_e2e_prometheus import free_port, wait_until
from .test_probe import endpoint, probe_config

ROOT = Path(__file__).resolve().parent.parent
SCRAPE = ROOT / "packaging" / "prometheus" / "probe.yml"
TARGETS = ROOT / "packaging" / "prometheus" / "probe-targets.json"
PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (apt-get install "
                                              "prometheus)")
def test_promtool_accepts_the_probe_scrape_job():
    checked = subprocess.run([PROMTOOL, "check", "config", str(SCRAPE)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    [group] = json.loads(TARGETS.read_text())
    assert group["targets"] and group["labels"]


@pytest.mark.e2e
@pytest.mark.skipif(PROMETHEUS is None, reason="the prometheus binary is not installed")
def test_prometheus_probes_an_ilo_through_the_agent_with_the_shipped_relabelling(tmp_path):
    [job] = yaml.safe_load(SCRAPE.read_text())["scrape_configs"]
    with serve(Ilo(tree(ILO5_TREE))) as ilo, endpoint(
            Prober(probe_config(tmp_path, ["127.0.0.1:*"]), 80.0)) as server:
        # the job as shipped, on loopback: plain HTTP, no login, a scrape a second
        for key in ("scheme", "tls_config", "basic_auth"):
            job.pop(key)
        job.update(scrape_interval="1s", scrape_timeout="1s")
        host, port = server.server_address[:2]
        job["relabel_configs"][-1]["replacement"] = f"{host}:{port}"
        sd = tmp_path / "file_sd"
        sd.mkdir()
        [group] = json.loads(TARGETS.read_text())
        group["targets"] = [ilo.address]
        (sd / "ilos.json").write_text(json.dumps([group]))
        job["file_sd_configs"] = [{"files": [str(sd / "*.json")]}]
        config = tmp_path / "prometheus.yml"
        config.write_text(yaml.safe_dump({"scrape_configs": [job]}))
        web = free_port()
        log = tmp_path / "prometheus.log"
        with log.open("w") as output:
            process = subprocess.Popen(
                [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'db'}",
                 f"--web.listen-address=127.0.0.1:{web}"],
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            def query(expr: str) -> list[dict]:
                url = f"http://127.0.0.1:{web}/api/v1/query?" + urllib.parse.urlencode(
                    {"query": expr})
                with urllib.request.urlopen(url, timeout=5) as answer:
                    return json.load(answer)["data"]["result"]

            [success] = wait_until("a probe", lambda: query("smartarray_probe_success"), 60,
                                   process, log)
            [cache] = wait_until("the cache status", lambda: query(
                'smartarray_cache_status{controller="0",state="ok"}'), 60, process, log)
        finally:
            process.terminate()
            process.wait(20)
    assert success["value"][1] == "1"
    assert success["metric"] == {"__name__": "smartarray_probe_success", "instance": ilo.address,
                                 "job": "smartarray-ilo", "datacenter": "fra1"}
    assert cache["value"][1] == "1" and cache["metric"]["instance"] == ilo.address
