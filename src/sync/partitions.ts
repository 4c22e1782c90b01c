import { RUN_LOG_FORM_TYPES } from '../source/schemas/forms.ts';
import type { StreamDef } from '../resources/stream.ts';

export interface Partition {
  /** The checkpoint key of this partition (`-` when the stream has one). */
  key: string;
  query: Record<string, unknown>;
}

export function partitionsOf(stream: StreamDef, ids: { formIds: number[]; runTypeIds: number[] }): Partition[] {
  if (stream.partitions === 'formIds') {
    return ids.formIds.map((id) => ({ key: `form-${id}`, query: { FormId: id } }));
  }
  if (stream.partitions === 'runTypes') {
    return ids.runTypeIds.flatMap((id) =>
      RUN_LOG_FORM_TYPES.map((t) => ({ key: `run-type-${id}-${t}`, query: { RunTypeId: id, FormType: t } })),
    );
  }
  return [{ key: '-', query: {} }];
}
