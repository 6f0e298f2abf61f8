// actors/observe/telemetry-config.ts: reads `[telemetry]` from the live realm config (checked against
// contracts' TelemetryConfig; an invalid section disables export and is logged once per change).
import type { Logger } from 'pino';
import { Compile } from 'typebox/compile';
import type { Config } from '../../contracts/config.ts';
import { TelemetryConfig } from '../../contracts/routes-observe.ts';

/** Trace export settings in effect. */
export interface ResolvedTelemetry {
  /** The traces URL (`<otlp_endpoint>/v1/traces`). */
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  serviceName: string;
  flushIntervalMs: number;
  maxQueue: number;
  exportTimeoutMs: number;
  headers: Record<string, string>;
}

function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

const check = Compile(TelemetryConfig);

/** A reader that re-resolves only when the config object changes (config replace/patch). */
export function telemetryReader(config: () => Config, log: Logger): () => ResolvedTelemetry | null {
  let seen: unknown = Symbol('none');
  let resolved: ResolvedTelemetry | null = null;
  return () => {
    const section = (config() as Record<string, unknown>).telemetry;
    if (section === seen) return resolved;
    seen = section;
    resolved = null;
    if (section === undefined) return null;
    if (!check.Check(section)) {
      log.warn({ errors: [...check.Errors(section)].slice(0, 3) }, 'invalid [telemetry] config; trace export off');
      return null;
    }
    const t = section as TelemetryConfig;
    if (!t.otlp_endpoint) return null;
    resolved = {
      url: tracesUrl(t.otlp_endpoint),
      protocol: t.protocol ?? 'http/protobuf',
      serviceName: t.service_name ?? 'warren',
      flushIntervalMs: t.flush_interval_ms ?? 1000,
      maxQueue: t.max_queue ?? 2048,
      exportTimeoutMs: t.export_timeout_ms ?? 10_000,
      headers: t.headers ?? {},
    };
    return resolved;
  };
}
