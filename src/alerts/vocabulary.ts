/** An alert's statuses (docs/alerts.md). Pure, no imports: the server's schema and the web app read it. */
export const ALERT_STATUSES = ['OK', 'ALERTING', 'NO_DATA', 'ERROR', 'PAUSED'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];
