"""The deployment files agree with the bot and with each other: compose.yaml's monitoring
profile, Prometheus' scrape of the bot's port, and the Grafana dashboard's queries, which
must name only metrics the bot exports (a renamed metric would leave a panel empty, silently).
CI also validates compose.yaml against the Compose specification (.ci/run)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from bot.metrics import Metrics

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def exported_names() -> set[str]:
    """Every sample name the bot's /metrics can carry (``_total``, ``_bucket``...)."""
    names: set[str] = set()
    for family in Metrics().registry.collect():
        names.add(family.name)
        suffixes = {
            "counter": ("_total", "_created"),
            "histogram": ("_bucket", "_count", "_sum", "_created"),
        }.get(family.type, ())
        names.update(family.name + suffix for suffix in suffixes)
    return names


def dashboard_queries() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana/dashboards/tttbot.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def test_the_dashboard_queries_only_metrics_the_bot_exports() -> None:
    exported = exported_names()
    queried = {
        name
        for expr in dashboard_queries()
        for name in re.findall(r"\b((?:tttbot|process)_[a-z_]+)\b", expr)
    }
    assert queried - exported == set()
    # ...and shows every metric of the bot's own.
    own = {name for name in exported if name.startswith("tttbot_")}
    shown = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in queried}
    assert {re.sub(r"_(total|bucket|count|sum|created)$", "", name) for name in own} <= shown


def test_the_memory_and_cpu_panel_shows_both_each_in_its_unit() -> None:
    """It showed the resident memory only."""
    dashboard = json.loads((DEPLOY / "grafana/dashboards/tttbot.json").read_text())
    (panel,) = [panel for panel in dashboard["panels"] if panel["title"] == "Memory and CPU"]
    memory, cpu = panel["targets"]
    # Summed by target: a gateway process has one series, gunicorn's workers one each (a pid
    # label: bot.metrics), which together are what that target costs.
    assert memory["expr"] == 'sum by (instance) (process_resident_memory_bytes{job="tttbot"})'
    # A counter of seconds: its rate is the share of a core the process used. Summed after
    # the rate, so that a worker replaced is not read as a counter reset.
    assert cpu["expr"] == (
        'sum by (instance) (rate(process_cpu_seconds_total{job="tttbot"}[$__rate_interval]))'
    )
    assert "process_cpu_seconds_total" in exported_names()
    assert panel["fieldConfig"]["defaults"]["unit"] == "bytes"
    (override,) = panel["fieldConfig"]["overrides"]
    assert override["matcher"] == {"id": "byFrameRefID", "options": cpu["refId"]}
    assert {"id": "unit", "value": "percentunit"} in override["properties"]


def test_the_dashboard_reads_the_provisioned_data_source() -> None:
    datasource = load_yaml(DEPLOY / "grafana/provisioning/datasources/prometheus.yml")
    (source,) = datasource["datasources"]
    dashboard = json.loads((DEPLOY / "grafana/dashboards/tttbot.json").read_text())
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == source["uid"], panel["title"]
    assert source["url"] == "http://prometheus:9090"


def test_prometheus_scrapes_the_ports_compose_gives_the_bot_and_the_workers() -> None:
    compose = load_yaml(REPO / "compose.yaml")
    services = compose["services"]
    bot = services["bot"]["environment"]
    prometheus = load_yaml(DEPLOY / "prometheus.yml")
    (job,) = prometheus["scrape_configs"]  # one job: the dashboard's queries read job="tttbot"
    assert job["job_name"] == "tttbot"
    assert job["metrics_path"] == "/metrics"
    (targets,) = job["static_configs"]
    bind = services["workers"]["command"][services["workers"]["command"].index("--bind") + 1]
    assert targets["targets"] == [f"bot:{bot['TTT_HTTP_PORT']}", f"workers:{bind.split(':')[1]}"]
    # Listening beyond the container's loopback, or Prometheus could not reach it.
    assert bot["TTT_HTTP_HOST"] == "0.0.0.0"
    assert bind.startswith("0.0.0.0:")
    # Prometheus starts with either front door, and starts neither.
    assert "depends_on" not in services["prometheus"]


def test_monitoring_is_a_profile_of_its_own_with_the_files_it_mounts() -> None:
    services = load_yaml(REPO / "compose.yaml")["services"]
    default = {name for name, service in services.items() if "profiles" not in service}
    assert default == {"db", "bot"}  # `docker compose up` starts what it did before
    for name in ("prometheus", "grafana"):
        assert services[name]["profiles"] == ["monitoring"]
        for volume in services[name]["volumes"]:
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (REPO / source).exists(), volume
        for port in services[name].get("ports", []):  # on the host's loopback only
            assert port.startswith("127.0.0.1:"), port
    provider = load_yaml(DEPLOY / "grafana/provisioning/dashboards/tttbot.yml")
    (dashboards,) = provider["providers"]
    mounts = {volume.split(":")[1] for volume in services["grafana"]["volumes"]}
    assert dashboards["options"]["path"] in mounts


def test_the_http_front_door_is_a_profile_and_the_gateway_bot_the_default() -> None:
    """`docker compose up -d` starts the gateway bot as before the http profile existed (an
    operator's old .env still works); the HTTP workers and their proxy start when named, and
    then without the gateway bot."""
    services = load_yaml(REPO / "compose.yaml")["services"]
    assert "profiles" not in services["bot"]
    assert services["workers"]["profiles"] == ["http"]
    assert services["proxy"]["profiles"] == ["http"]
    assert services["proxy"]["depends_on"] == ["workers"]
    assert set(services["workers"]["depends_on"]) == {"db"}
    # No required-variable interpolation (${X:?}) in the profile's services: compose would
    # refuse every command, the gateway bot's too, where .env lacks a setting only they need.
    for name in ("workers", "proxy"):
        assert ":?" not in json.dumps(services[name]), name
    # The proxy stops with one line naming TTT_DOMAIN when it is missing.
    entrypoint = " ".join(services["proxy"]["entrypoint"])
    assert 'test -n "$$TTT_DOMAIN" ||' in entrypoint
    assert "set TTT_DOMAIN in .env" in entrypoint
    assert "exec caddy run --config /etc/caddy/Caddyfile --adapter caddyfile" in entrypoint


def test_the_http_workers_run_gunicorn_on_the_database_behind_the_proxy_only() -> None:
    compose = load_yaml(REPO / "compose.yaml")
    workers, proxy, bot = (compose["services"][name] for name in ("workers", "proxy", "bot"))
    assert workers["command"] == [
        "gunicorn",
        "-c",
        "python:bot.gunicorn_conf",
        "bot.gunicorn_app:make_app",
        "--worker-class",
        "aiohttp.GunicornWebWorker",
        "--workers",
        "2",
        "--bind",
        "0.0.0.0:8080",
    ]
    assert workers["build"] == bot["build"]  # the same image
    assert workers["environment"]["DATABASE_URL"] == bot["environment"]["DATABASE_URL"]
    assert workers["depends_on"] == bot["depends_on"]
    # The image's HEALTHCHECK asks /readyz on TTT_HTTP_PORT: gunicorn's port.
    assert workers["environment"]["TTT_HTTP_PORT"] == "8080"
    assert "ports" not in workers  # reached through the proxy only
    assert workers["env_file"] == ".env"  # DISCORD_PUBLIC_KEY, as the gateway bot's token
    assert sorted(proxy["ports"]) == ["443:443", "80:80"]  # ACME and Discord, from anywhere
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    # Caddy's certificates and ACME account outlive the container.
    assert {"caddy-data:/data", "caddy-config:/config"} <= set(proxy["volumes"])
    assert {"caddy-data", "caddy-config"} <= set(compose["volumes"])
    assert "# TTT_DOMAIN=" in (REPO / ".env.example").read_text(encoding="utf-8")


def test_the_bot_starts_once_its_database_is_healthy_and_the_data_outlives_the_container() -> None:
    """Issue 9's compose file: PostgreSQL with a health check and a named volume, and the bot
    on that database, started only once it answers (else its first start fails to connect and
    restarts until it does)."""
    compose = load_yaml(REPO / "compose.yaml")
    db, bot = compose["services"]["db"], compose["services"]["bot"]
    assert bot["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    (data,) = db["volumes"]
    volume, mount = data.split(":")
    assert volume in compose["volumes"]  # a named volume, not a folder of the host
    assert mount == "/var/lib/postgresql/data"
    user, name = db["environment"]["POSTGRES_USER"], db["environment"]["POSTGRES_DB"]
    assert bot["environment"]["DATABASE_URL"].startswith(f"postgresql://{user}:")
    assert bot["environment"]["DATABASE_URL"].endswith(f"@db:5432/{name}")
