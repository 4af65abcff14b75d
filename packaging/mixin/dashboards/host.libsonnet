// The host dashboard (one host, a row per controller): packaging/grafana/dashboard.json.
// Its charge gauge and data-age panel take their steps from _config (mixin.libsonnet).
{
  local c = $._config,

  grafanaDashboards+:: {
    'dashboard.json': {
      "title": "Smart Array write cache and backup power",
      "uid": "smartarray-agent",
      "description": "HP/HPE Smart Array controllers from smartarray-agent: backup power, cache, write cache protection, drive health, collector health. One row per controller of the chosen host: one watched by an agent, or an iLO read through /probe for a host without one.",
      "tags": [
        "smartarray",
        "hardware",
        "storage"
      ],
      "editable": true,
      "graphTooltip": 1,
      "schemaVersion": 39,
      "version": 1,
      "time": {
        "from": "now-24h",
        "to": "now"
      },
      "refresh": "1m",
      "timezone": "",
      "links": [
        {
          "title": "Smart Array fleet",
          "type": "link",
          "url": "/d/smartarray-fleet",
          "icon": "dashboard",
          "keepTime": true,
          "targetBlank": false,
          "tooltip": "every host at once",
          "asDropdown": false,
          "includeVars": false,
          "tags": []
        }
      ],
      "annotations": {
        "list": [
          {
            "builtIn": 1,
            "datasource": {
              "type": "grafana",
              "uid": "-- Grafana --"
            },
            "enable": true,
            "hide": true,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard"
          }
        ]
      },
      "templating": {
        "list": [
          {
            "name": "datasource",
            "label": "Data source",
            "type": "datasource",
            "query": "prometheus",
            "current": {},
            "hide": 0,
            "refresh": 1,
            "regex": "",
            "includeAll": false,
            "multi": false,
            "options": []
          },
          {
            "name": "instance",
            "label": "Host",
            "description": "A host watched by an agent (its instance, the agent's address) or by a probe (its instance, the iLO's address, as the probe job's relabelling sets it).",
            "type": "query",
            "datasource": {
              "type": "prometheus",
              "uid": "${datasource}"
            },
            "query": {
              "query": "label_values({__name__=~\"smartarray_collector_success|smartarray_probe_success\"}, instance)",
              "refId": "instance"
            },
            "definition": "label_values({__name__=~\"smartarray_collector_success|smartarray_probe_success\"}, instance)",
            "refresh": 2,
            "sort": 1,
            "includeAll": false,
            "multi": false,
            "current": {},
            "hide": 0,
            "regex": "",
            "options": []
          },
          {
            "name": "host",
            "label": "Host name (node_exporter)",
            "type": "query",
            "datasource": {
              "type": "prometheus",
              "uid": "${datasource}"
            },
            "query": {
              "query": "label_values({__name__=~\"smartarray_collector_success|smartarray_probe_success\",instance=\"$instance\"}, instance)",
              "refId": "host"
            },
            "definition": "label_values({__name__=~\"smartarray_collector_success|smartarray_probe_success\",instance=\"$instance\"}, instance)",
            "refresh": 2,
            "sort": 0,
            "includeAll": false,
            "multi": false,
            "current": {},
            "hide": 2,
            "regex": "/^\\[?([^\\]]+?)\\]?(?::[0-9]+)?$/",
            "options": [],
            "description": "The agent's instance without its port; node_exporter's instance must be the same host name with any port. A probed host's instance is its iLO, which runs no node_exporter."
          },
          {
            "name": "controller",
            "label": "Controller",
            "type": "query",
            "datasource": {
              "type": "prometheus",
              "uid": "${datasource}"
            },
            "query": {
              "query": "label_values(smartarray_controller_info{instance=\"$instance\"}, controller)",
              "refId": "controller"
            },
            "definition": "label_values(smartarray_controller_info{instance=\"$instance\"}, controller)",
            "refresh": 2,
            "sort": 1,
            "includeAll": true,
            "multi": true,
            "current": {
              "selected": true,
              "text": [
                "All"
              ],
              "value": [
                "$__all"
              ]
            },
            "hide": 0,
            "regex": "",
            "options": []
          }
        ]
      },
      "panels": [
        {
          "id": 1,
          "type": "row",
          "title": "Controller $controller on $instance",
          "collapsed": false,
          "repeat": "controller",
          "gridPos": {
            "x": 0,
            "y": 0,
            "w": 24,
            "h": 1
          },
          "panels": []
        },
        {
          "id": 2,
          "type": "table",
          "title": "Identity",
          "description": "Model, slot, serial number and firmware (smartarray_controller_info).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 1,
            "w": 8,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_controller_info{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "transformations": [
            {
              "id": "labelsToFields",
              "options": {
                "mode": "columns"
              }
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "__name__": true,
                  "job": true,
                  "instance": true,
                  "controller": true
                },
                "indexByName": {
                  "model": 0,
                  "slot": 1,
                  "serial": 2,
                  "firmware": 3
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {},
            "overrides": []
          }
        },
        {
          "id": 3,
          "type": "stat",
          "title": "Backup power",
          "description": "Battery/Capacitor Status (smartarray_backup_power_status).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 1,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_backup_power_status{instance=\"$instance\",controller=\"$controller\"} == 1",
              "legendFormat": "{{state}}",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "name",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "fixed",
                "fixedColor": "text"
              },
              "noValue": "no data"
            },
            "overrides": [
              {
                "matcher": {
                  "id": "byName",
                  "options": "ok"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "green"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "recharging"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "orange"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "failed"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "red"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "other"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "purple"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "absent"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "text"
                    }
                  }
                ]
              }
            ]
          }
        },
        {
          "id": 4,
          "type": "stat",
          "title": "Backup power charge",
          "description": "Charge of the battery or capacitor, where a source reports it (the iLO's Redfish battery, with a [redfish] table in the agent's configuration); the vendor CLI prints none, so without an iLO configured this says so instead of showing an empty gauge. Below %d %% the write-cache interlock counts it as unprotected." % c.batteryThresholdPercent,
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 1,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_backup_power_charge_ratio{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "charge",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "unit": "percentunit",
              "min": 0,
              "max": 1,
              "noValue": "no iLO configured: charge not reported",
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "red",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": c.batteryThresholdPercent / 100
                  },
                  {
                    "color": "green",
                    "value": c.batteryGoodPercent / 100
                  }
                ]
              },
              "color": {
                "mode": "thresholds"
              }
            },
            "overrides": []
          }
        },
        {
          "id": 5,
          "type": "stat",
          "title": "Cache status",
          "description": "Cache Status (smartarray_cache_status).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 16,
            "y": 1,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_cache_status{instance=\"$instance\",controller=\"$controller\"} == 1",
              "legendFormat": "{{state}}",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "name",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "fixed",
                "fixedColor": "text"
              },
              "noValue": "no data"
            },
            "overrides": [
              {
                "matcher": {
                  "id": "byName",
                  "options": "ok"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "green"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "not_configured"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "orange"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "temporarily_disabled"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "orange"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "permanently_disabled"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "red"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "other"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "purple"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "absent"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "text"
                    }
                  }
                ]
              }
            ]
          }
        },
        {
          "id": 6,
          "type": "stat",
          "title": "Unprotected write cache",
          "description": "1 when write cache can hold data that no healthy backup power protects (smartarray_unprotected_write_cache). Critical: turn no-battery write cache off.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 20,
            "y": 1,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_unprotected_write_cache{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "unknown",
              "mappings": [
                {
                  "type": "value",
                  "options": {
                    "0": {
                      "text": "protected",
                      "color": "green",
                      "index": 0
                    },
                    "1": {
                      "text": "UNPROTECTED",
                      "color": "red",
                      "index": 1
                    }
                  }
                }
              ],
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "red",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 7,
          "type": "bargauge",
          "title": "Cache ratio",
          "description": "Share of the cache given to reads and to writes (smartarray_cache_ratio).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 5,
            "w": 8,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_cache_ratio{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "{{op}}",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "orientation": "horizontal",
            "displayMode": "basic",
            "showUnfilled": true
          },
          "fieldConfig": {
            "defaults": {
              "unit": "percentunit",
              "min": 0,
              "max": 1,
              "color": {
                "mode": "fixed",
                "fixedColor": "blue"
              }
            },
            "overrides": []
          }
        },
        {
          "id": 8,
          "type": "stat",
          "title": "Write cache active",
          "description": "1 when the controller caches writes now (smartarray_write_cache_active).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 5,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_write_cache_active{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "unknown",
              "mappings": [
                {
                  "type": "value",
                  "options": {
                    "0": {
                      "text": "inactive",
                      "color": "orange",
                      "index": 0
                    },
                    "1": {
                      "text": "active",
                      "color": "green",
                      "index": 1
                    }
                  }
                }
              ],
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "orange",
                    "value": null
                  },
                  {
                    "color": "green",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 9,
          "type": "stat",
          "title": "No-battery write cache",
          "description": "Write cache allowed without backup power (smartarray_no_battery_write_cache_enabled).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 5,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_no_battery_write_cache_enabled{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "unknown",
              "mappings": [
                {
                  "type": "value",
                  "options": {
                    "0": {
                      "text": "disabled",
                      "color": "green",
                      "index": 0
                    },
                    "1": {
                      "text": "enabled",
                      "color": "orange",
                      "index": 1
                    }
                  }
                }
              ],
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 10,
          "type": "stat",
          "title": "Cache size",
          "description": "Total cache size (smartarray_cache_size_bytes).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 16,
            "y": 5,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_cache_size_bytes{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value",
            "colorMode": "none",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "unit": "bytes",
              "noValue": "no cache"
            },
            "overrides": []
          }
        },
        {
          "id": 11,
          "type": "stat",
          "title": "Controller status",
          "description": "Controller Status (smartarray_controller_status).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 20,
            "y": 5,
            "w": 4,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_controller_status{instance=\"$instance\",controller=\"$controller\"} == 1",
              "legendFormat": "{{state}}",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "name",
            "colorMode": "background",
            "graphMode": "none",
            "justifyMode": "center",
            "orientation": "auto"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "fixed",
                "fixedColor": "text"
              },
              "noValue": "no data"
            },
            "overrides": [
              {
                "matcher": {
                  "id": "byName",
                  "options": "ok"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "green"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "failed"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "red"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "other"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "purple"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byName",
                  "options": "absent"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "text"
                    }
                  }
                ]
              }
            ]
          }
        },
        {
          "id": 12,
          "type": "state-timeline",
          "title": "Backup power and cache over time",
          "description": "Battery/Capacitor Status and Cache Status over the dashboard's range.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 9,
            "w": 12,
            "h": 6
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "max by (state) (smartarray_backup_power_status{instance=\"$instance\",controller=\"$controller\"} == 1)",
              "legendFormat": "backup power: {{state}}",
              "refId": "A",
              "range": true,
              "instant": false
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "max by (state) (smartarray_cache_status{instance=\"$instance\",controller=\"$controller\"} == 1)",
              "legendFormat": "cache: {{state}}",
              "refId": "B",
              "range": true,
              "instant": false
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "max(smartarray_write_cache_active{instance=\"$instance\",controller=\"$controller\"})",
              "legendFormat": "write cache active",
              "refId": "C",
              "range": true,
              "instant": false
            }
          ],
          "options": {
            "showValue": "never",
            "mergeValues": true,
            "rowHeight": 0.8,
            "legend": {
              "showLegend": false
            }
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "transparent",
                    "value": null
                  },
                  {
                    "color": "blue",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 13,
          "type": "table",
          "title": "Drive health",
          "description": "Logical and physical drives whose status is not OK (smartarray_logical_drive_status, smartarray_physical_drive_status). Empty: every drive is OK.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 9,
            "w": 12,
            "h": 6
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_logical_drive_status{instance=\"$instance\",controller=\"$controller\",state!=\"ok\"} == 1",
              "legendFormat": "",
              "refId": "A",
              "range": false,
              "instant": true
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_physical_drive_status{instance=\"$instance\",controller=\"$controller\",state!=\"ok\"} == 1",
              "legendFormat": "",
              "refId": "B",
              "range": false,
              "instant": true
            }
          ],
          "transformations": [
            {
              "id": "merge",
              "options": {}
            },
            {
              "id": "organize",
              "options": {
                "excludeByName": {
                  "Time": true,
                  "Value": true,
                  "job": true,
                  "instance": true,
                  "controller": true
                },
                "renameByName": {
                  "__name__": "metric"
                }
              }
            }
          ],
          "options": {
            "showHeader": true,
            "cellHeight": "sm"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "all drives OK"
            },
            "overrides": []
          }
        },
        {
          "id": 14,
          "type": "stat",
          "title": "Drives by status",
          "description": "Count of logical and physical drives in each status.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 15,
            "w": 24,
            "h": 3
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count by (state) (smartarray_logical_drive_status{instance=\"$instance\",controller=\"$controller\"} == 1)",
              "legendFormat": "logical {{state}}",
              "refId": "A",
              "range": false,
              "instant": true
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "count by (state) (smartarray_physical_drive_status{instance=\"$instance\",controller=\"$controller\"} == 1)",
              "legendFormat": "physical {{state}}",
              "refId": "B",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value_and_name",
            "colorMode": "background",
            "graphMode": "none",
            "orientation": "vertical"
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "fixed",
                "fixedColor": "orange"
              }
            },
            "overrides": [
              {
                "matcher": {
                  "id": "byRegexp",
                  "options": ".* ok$"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "green"
                    }
                  }
                ]
              },
              {
                "matcher": {
                  "id": "byRegexp",
                  "options": ".* failed$"
                },
                "properties": [
                  {
                    "id": "color",
                    "value": {
                      "mode": "fixed",
                      "fixedColor": "red"
                    }
                  }
                ]
              }
            ]
          }
        },
        {
          "id": 19,
          "type": "timeseries",
          "title": "Write latency per logical drive (node_exporter)",
          "description": "Average time per completed write of each logical drive's block device, from node_exporter (node_disk_write_time_seconds_total / node_disk_writes_completed_total), joined on the device name (smartarray_logical_drive_info's device label). Read it beside the write cache panel: when write cache goes off (a failed or recharging battery), synchronous writes wait for the disks and this rises by an order of magnitude. Empty when node_exporter is not scraped under the same host name.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 18,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "(\n  rate(node_disk_write_time_seconds_total{instance=~\"$host(:[0-9]+)?\"}[$__rate_interval])\n  / rate(node_disk_writes_completed_total{instance=~\"$host(:[0-9]+)?\"}[$__rate_interval])\n)\n* on (device) group_left (controller, logical_drive)\n  smartarray_logical_drive_info{instance=\"$instance\",controller=\"$controller\",device!=\"\"}",
              "legendFormat": "LD {{logical_drive}} ({{device}})",
              "refId": "A",
              "range": true,
              "instant": false
            }
          ],
          "options": {
            "legend": {
              "displayMode": "list",
              "placement": "bottom",
              "showLegend": true
            },
            "tooltip": {
              "mode": "multi",
              "sort": "desc"
            }
          },
          "fieldConfig": {
            "defaults": {
              "unit": "s",
              "min": 0,
              "noValue": "no node_exporter disk data",
              "custom": {
                "drawStyle": "line",
                "lineWidth": 1,
                "fillOpacity": 10
              }
            },
            "overrides": []
          }
        },
        {
          "id": 20,
          "type": "state-timeline",
          "title": "Write cache per logical drive",
          "description": "1 (on) while the controller caches this logical drive's writes: the drive's caching is on (smartarray_logical_drive_caching_enabled) and the controller's write cache is active (smartarray_write_cache_active). Beside the write latency panel.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 12,
            "y": 18,
            "w": 12,
            "h": 8
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_logical_drive_caching_enabled{instance=\"$instance\",controller=\"$controller\"}\n* on (instance, job, controller) group_left ()\n  smartarray_write_cache_active{instance=\"$instance\",controller=\"$controller\"}",
              "legendFormat": "LD {{logical_drive}}",
              "refId": "A",
              "range": true,
              "instant": false
            }
          ],
          "options": {
            "showValue": "never",
            "mergeValues": true,
            "rowHeight": 0.8,
            "legend": {
              "displayMode": "list",
              "placement": "bottom",
              "showLegend": true
            }
          },
          "fieldConfig": {
            "defaults": {
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "red",
                    "value": null
                  },
                  {
                    "color": "green",
                    "value": 1
                  }
                ]
              },
              "mappings": [
                {
                  "type": "value",
                  "options": {
                    "0": {
                      "text": "writes not cached",
                      "color": "red"
                    },
                    "1": {
                      "text": "write cache on",
                      "color": "green"
                    }
                  }
                }
              ]
            },
            "overrides": []
          }
        },
        {
          "id": 15,
          "type": "row",
          "title": "Collector or probe health on $instance",
          "collapsed": false,
          "gridPos": {
            "x": 0,
            "y": 26,
            "w": 24,
            "h": 1
          },
          "panels": []
        },
        {
          "id": 16,
          "type": "stat",
          "title": "Collector success",
          "description": "1 when each collector's last attempt succeeded (smartarray_collector_success); for a probed iLO, 1 when its last read through /probe succeeded (smartarray_probe_success).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 30,
            "w": 8,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_collector_success{instance=\"$instance\"}",
              "legendFormat": "{{collector}}",
              "refId": "A",
              "range": false,
              "instant": true
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_probe_success{instance=\"$instance\"}",
              "legendFormat": "probe",
              "refId": "B",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value_and_name",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "mappings": [
                {
                  "type": "value",
                  "options": {
                    "0": {
                      "text": "failing",
                      "color": "red"
                    },
                    "1": {
                      "text": "ok",
                      "color": "green"
                    }
                  }
                }
              ],
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "red",
                    "value": null
                  },
                  {
                    "color": "green",
                    "value": 1
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 17,
          "type": "stat",
          "title": "Data age",
          "description": "Time since each collector last succeeded (time() - smartarray_collector_last_success_timestamp_seconds); for a probed iLO, the age of the read its probe is answered from (smartarray_probe_snapshot_age_seconds).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 8,
            "y": 30,
            "w": 8,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "time() - smartarray_collector_last_success_timestamp_seconds{instance=\"$instance\"}",
              "legendFormat": "{{collector}}",
              "refId": "A",
              "range": false,
              "instant": true
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_probe_snapshot_age_seconds{instance=\"$instance\"}",
              "legendFormat": "probe",
              "refId": "B",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "value_and_name",
            "colorMode": "background",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "unit": "s",
              "color": {
                "mode": "thresholds"
              },
              "thresholds": {
                "mode": "absolute",
                "steps": [
                  {
                    "color": "green",
                    "value": null
                  },
                  {
                    "color": "orange",
                    "value": c.dataAgeWarningSeconds
                  },
                  {
                    "color": "red",
                    "value": c.staleSeconds
                  }
                ]
              }
            },
            "overrides": []
          }
        },
        {
          "id": 18,
          "type": "timeseries",
          "title": "Collection duration",
          "description": "How long each collector's last attempt took (smartarray_collector_duration_seconds); for a probed iLO, how long its last read took (smartarray_probe_duration_seconds).",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 16,
            "y": 30,
            "w": 8,
            "h": 4
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_collector_duration_seconds{instance=\"$instance\"}",
              "legendFormat": "{{collector}}",
              "refId": "A",
              "range": true,
              "instant": false
            },
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_probe_duration_seconds{instance=\"$instance\"}",
              "legendFormat": "probe",
              "refId": "B",
              "range": true,
              "instant": false
            }
          ],
          "options": {
            "legend": {
              "showLegend": true,
              "displayMode": "list",
              "placement": "bottom"
            },
            "tooltip": {
              "mode": "multi"
            }
          },
          "fieldConfig": {
            "defaults": {
              "unit": "s",
              "min": 0
            },
            "overrides": []
          }
        },
        {
          "id": 21,
          "type": "stat",
          "title": "Vendor CLI version",
          "description": "The Smart Array CLI the agent runs and its version (smartarray_cli_info); a probed iLO has none.",
          "datasource": {
            "type": "prometheus",
            "uid": "${datasource}"
          },
          "gridPos": {
            "x": 0,
            "y": 27,
            "w": 24,
            "h": 3
          },
          "targets": [
            {
              "datasource": {
                "type": "prometheus",
                "uid": "${datasource}"
              },
              "expr": "smartarray_cli_info{instance=\"$instance\"}",
              "legendFormat": "{{version}}",
              "refId": "A",
              "range": false,
              "instant": true
            }
          ],
          "options": {
            "reduceOptions": {
              "calcs": [
                "lastNotNull"
              ],
              "fields": "",
              "values": false
            },
            "textMode": "name",
            "colorMode": "none",
            "graphMode": "none"
          },
          "fieldConfig": {
            "defaults": {
              "noValue": "not reported"
            },
            "overrides": []
          }
        }
      ]
    },
  },
}
