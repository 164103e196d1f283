import { z } from 'zod';
import { all, DateTime } from '../answer-schemas.js';
import { DETECTOR_TYPES } from './config.js';

/** The answers of the detector catalog (docs/signals.md, "Detectors"). */

export const DetectorAnswer = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(DETECTOR_TYPES),
    config: z.record(z.string(), z.unknown()).describe("the type's configuration"),
    enabled: z.boolean(),
    created_at: DateTime,
    update_time: DateTime,
  })
  .meta({ id: 'Detector' });

export const DetectorListAnswer = all(DetectorAnswer).meta({ id: 'DetectorList' });
