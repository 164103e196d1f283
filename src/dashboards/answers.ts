import { z } from 'zod';
import { AnyJson, all, Count, DateTime } from '../answer-schemas.js';
import { WIDGET_TYPES } from '../widgets/spec.js';

/** The answers of the dashboard and widget catalog (docs/dashboards.md). */

/** A dashboard's own fields: the list item without `widget_count`. */
export const DashboardFieldsAnswer = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    is_default: z.boolean(),
    creator: z
      .string()
      .nullable()
      .describe('display name (or e-mail) of the user who created it; null when that account was deleted'),
    create_time: DateTime,
    update_time: DateTime,
  })
  .meta({ id: 'Dashboard' });

export const DashboardListAnswer = all(DashboardFieldsAnswer.extend({ widget_count: Count })).meta({
  id: 'DashboardList',
});

/** Dashboard detail: its widgets ordered by creation time. */
export const DashboardDetailAnswer = DashboardFieldsAnswer.extend({
  widgets: z.array(
    z.object({ id: z.string(), title: z.string(), type: z.enum(WIDGET_TYPES), spec: AnyJson, create_time: DateTime }),
  ),
}).meta({ id: 'DashboardDetail' });

/** `GET /widgets/{id}` and widget writes. */
export const WidgetAnswer = z
  .object({
    id: z.string(),
    dashboard_id: z.string(),
    title: z.string(),
    type: z.enum(WIDGET_TYPES),
    spec: AnyJson,
    create_time: DateTime,
    update_time: DateTime,
  })
  .meta({ id: 'Widget' });
