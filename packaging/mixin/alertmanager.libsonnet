// The Alertmanager example: alertmanagerConfig, written to packaging/prometheus/alertmanager.yml
// by generate.py with alertmanagerHeader as its opening comment.
{
  alertmanagerHeader:: |||
    Alertmanager configuration for smartarray-agent's alerts (alerts.yml): one page per problem.
    Merge `inhibit_rules` (and, if you like, the route's grouping) into your alertmanager.yml;
    the receiver below (on-call) is a placeholder: replace it with your pager, e-mail or chat
    receiver. Check with `amtool check-config alertmanager.yml`. Generated from the monitoring
    mixin (packaging/mixin; docs/packaging.md, "The mixin").

    What pages and what does not:
    - A failed battery pages once: SmartArrayBackupPowerFailed. The controller's reaction to it
      (SmartArrayCacheDisabled, SmartArrayWriteCacheInactive) is inhibited on the same host and
      controller while the cause fires. The same holds for a pack stuck recharging and for an
      unknown backup power word.
    - Unprotected write cache (critical) is the one page while it lasts: the backup power and
      cache alerts of that controller are inhibited by it; its runbook covers them.
    - The normal recharge after a reboot pages nobody: the cache alerts themselves ignore a
      controller whose backup power is recharging (alerts.yml), and
      SmartArrayBackupPowerRechargingTooLong judges the recharge over a window of hours.
  |||,

  alertmanagerConfig+:: {
    route: {
      receiver: 'on-call',
      group_by: ['alertname', 'instance', 'controller'],
      group_wait: '30s',
      group_interval: '5m',
      repeat_interval: '4h',
    },
    receivers: [{ name: 'on-call' }],
    inhibit_rules: [
      {
        source_matchers: ['alertname = SmartArrayUnprotectedWriteCache'],
        target_matchers: [
          'alertname =~ "SmartArrayBackupPower.*|SmartArrayCacheDisabled|SmartArrayWriteCacheInactive"',
        ],
        equal: ['instance', 'controller'],
      },
      {
        source_matchers: [
          'alertname =~ "SmartArrayBackupPowerFailed|SmartArrayBackupPowerRechargingTooLong|SmartArrayBackupPowerStatusUnknown"',
        ],
        target_matchers: ['alertname =~ "SmartArrayCacheDisabled|SmartArrayWriteCacheInactive"'],
        equal: ['instance', 'controller'],
      },
    ],
  },
}
