/** A signal's statuses (docs/signals.md). Pure, no imports: the server's service and the web app read it. */
export const SIGNAL_STATUSES = ['open', 'resolved', 'dismissed'] as const;
export type SignalStatus = (typeof SIGNAL_STATUSES)[number];
