import type { Warehouse } from '../warehouse/connection.ts';
import { personalHmac } from '../warehouse/personal-data/hmac.ts';
import { effectiveActions } from '../warehouse/personal-data/policy.ts';
import type { FieldPolicy, FieldTreatment } from './field-policy.ts';

/** The companies' personal-data policies as the warehouse stores them: what previews and models compare under. */
export function warehousePolicy(wh: Warehouse): FieldPolicy {
  return {
    fieldPolicy: async (companyKey) => {
      const treatments = new Map<string, FieldTreatment>();
      for (const [field, action] of await effectiveActions(wh, companyKey))
        if (action !== 'keep') treatments.set(field, action);
      return treatments;
    },
    hashValue: (value) => personalHmac(wh.personalDataKey()).of(value),
  };
}
