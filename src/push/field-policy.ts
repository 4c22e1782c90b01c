/**
 * What a company's personal-data policy does with each field in the warehouse: kept as sent, kept as an HMAC
 * (hex) of the value, or blocked (always null). A preview and a model compare against the warehouse, so they
 * must know: a hashed field is compared by its hash and shown as one, and a blocked field cannot be compared.
 * Fields the policy does not name are kept.
 */

export type FieldTreatment = 'keep' | 'hash' | 'block';

export interface FieldPolicy {
  /** The company's treatment of each service field it does not keep. */
  fieldPolicy(companyKey: string): Promise<ReadonlyMap<string, FieldTreatment>>;
  /** The value the warehouse holds for a hashed field. */
  hashValue(value: string): string;
}

/** Every field kept as sent: the policy of a warehouse without personal-data policies. */
export const KEEP_EVERYTHING: FieldPolicy = {
  fieldPolicy: async () => new Map(),
  hashValue: (value) => value,
};

export const treatmentOf = (policy: ReadonlyMap<string, FieldTreatment>, field: string): FieldTreatment =>
  policy.get(field) ?? 'keep';
