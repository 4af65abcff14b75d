// smartarray-agent's monitoring mixin (the convention of node-mixin and kubernetes-mixin): the
// alert rules (prometheusAlerts), the Alertmanager example (alertmanagerConfig) and the Grafana
// dashboards (grafanaDashboards), all from the settings below. generate.py writes
// packaging/prometheus/alerts.yml, alertmanager.yml and packaging/grafana/*.json from it;
// tests/test_mixin.py fails when those are not what it generates.
//
// Change a setting once here (or, without touching this file, in your own file passed as
// `generate.py --config mine.libsonnet`, e.g. { agentJob: 'hpe' }), regenerate, and every
// rule, description and dashboard that uses it follows: docs/packaging.md, "The mixin".
(import 'alerts.libsonnet') +
(import 'alertmanager.libsonnet') +
(import 'dashboards/host.libsonnet') +
(import 'dashboards/fleet.libsonnet') +
{
  _config+:: {
    // The project's source repository: its one address (pyproject.toml's [project.urls] and
    // the collection's galaxy.yml give the same).
    sourceRepository: 'https://github.com/smartarray-agent/smartarray-agent',
    // Each alert's runbook_url: %s is the lower-cased alert name, the anchor GitHub gives the
    // alert's heading in docs/runbooks.md. Point it at your own copy of the runbooks (a wiki,
    // an internal Git server) if the on-call cannot reach GitHub.
    runbookURLPattern: self.sourceRepository + '/blob/main/docs/runbooks.md#%s',

    // The scrape job of the agent: SmartArrayAgentDown and SmartArrayAgentAbsent select it,
    // and the fleet dashboard's job variable starts at it. In textfile mode (node_exporter
    // reads smartarray.prom) there is no such job: drop those two rules from your copy.
    agentJob: 'smartarray',
    jobSelector: 'job="%s"' % self.agentJob,

    // The scrape job of /probe (packaging/prometheus/probe.yml): one target per iLO, read by
    // an agent's `serve` for a host without an agent. SmartArrayProbeFailing selects it, and
    // the fleet dashboard tells its hosts from the agents' by it.
    probeJob: 'smartarray-ilo',
    probeSelector: 'job="%s"' % self.probeJob,
    // SmartArrayAgentAbsent: the agent job has no target now, and had some within this
    // lookback (a PromQL duration), or the probe job has none either. A mixed fleet that loses
    // its agent job pages; a fleet watched by probes alone, which never had agents, does not.
    // A fleet that drops its agents on purpose stops paging this long after the last one. The
    // rule reads every sample of the agent job's `up` in the window at each evaluation: a
    // longer window costs more (docs/fleet.md, "iLOs without an agent").
    agentAbsentLookback: '1d',
    // SmartArrayProbeFailing: an iLO unread (or its prober unscraped) for this long. A probe
    // job scrapes every 2 minutes and the agent answers from its last login for a minute.
    probeFailingMinutes: 15,
    // SmartArrayProbeSnapshotStale: a probe answered from a read older than this. An answer is
    // at most about max(scrape_interval, [probe] min_interval_s) + refresh_timeout_s old while
    // reads keep up: 2m + 60 s with probe.yml and the defaults, 300 s + 2m + 60 s at the
    // min_interval_s = 300 docs/fleet.md suggests for 500 iLOs. Keep it well above that.
    probeStaleSeconds: 900,

    // SmartArrayBackupPowerRechargingTooLong: recharging for more than this share of a window
    // of this many hours. A healthy pack recharges within a few hours of a power-on.
    backupPowerRechargeHours: 4,
    backupPowerRechargeRatio: 0.9,

    // SSD endurance (usage remaining, 1 = new): SmartArraySsdWearLow below the first,
    // SmartArraySsdWearCritical below the second; SmartArraySsdWearOutPredicted warns when the
    // trend of the last days reaches 0 within the horizon, while above the first.
    ssdWearLowRatio: 0.10,
    ssdWearCriticalRatio: 0.02,
    ssdWearTrendDays: 7,
    ssdWearHorizonDays: 30,

    // SmartArrayRebuildStalled: a rebuild whose progress has not moved for this long.
    rebuildStallHours: 2,

    // Data older than this is stale: SmartArrayCollectorDataStale (the agent's last successful
    // collection), SmartArrayTextfileStale (smartarray.prom's age), and the red step of the
    // host dashboard's data-age panel, whose yellow step is dataAgeWarningSeconds.
    staleSeconds: 900,
    dataAgeWarningSeconds: 300,

    // The host dashboard's charge gauge: red below the agent's write-cache interlock threshold
    // ([policy] battery_threshold_percent in config.toml), orange below the second, then green.
    batteryThresholdPercent: 80,
    batteryGoodPercent: 95,
  },
}
