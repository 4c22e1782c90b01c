import type { Endpoint } from '../source/endpoints.ts';
import type { Target } from '../warehouse/targets.ts';
import * as courses from './courses.ts';
import * as credentials from './credentials.ts';
import * as forms from './forms.ts';
import * as people from './people.ts';
import * as reference from './reference.ts';
import * as scheduling from './scheduling.ts';
import type { StreamDef } from './stream.ts';
import { catalogOf, FIELD_KINDS, PERSONAL_NAMES, personalColumnsByTable } from './personal-data.ts';
import type { PersonalData } from '../warehouse/personal-data/admin.ts';
import type { PersonalCatalog } from '../warehouse/personal-data/catalog.ts';
import { dedupe } from '../warehouse/mapper.ts';
import { streamGraph, type StreamGraph } from './graph.ts';
import * as timeOff from './time-off.ts';

/**
 * The catalog, assembled from one module per domain: each declares its endpoints and its streams (endpoint,
 * target table, strategy) under the stream's name. The endpoint list, the stream names and the run order are
 * derived here (the order from graph.ts); the sandbox, the client, the sync engine and the warehouse read them.
 */

export const endpoints = {
  ...reference.endpoints,
  ...people.endpoints,
  ...credentials.endpoints,
  ...scheduling.endpoints,
  ...timeOff.endpoints,
  ...courses.endpoints,
  ...forms.endpoints,
} as const;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;

const declared = [
  ...reference.streams,
  ...people.streams,
  ...credentials.streams,
  ...scheduling.streams,
  ...timeOff.streams,
  ...courses.streams,
  ...forms.streams,
] as const;

type Declared = (typeof declared)[number];
export type StreamName = Declared['name'];

/** A stream of the catalog: its name and its dependencies are names of the catalog's streams. */
export type Stream = StreamDef<StreamName, StreamName>;

/** Compiles only when every `dependsOn` names a declared stream: `Missing` lists the ones that do not. */
type Missing = Exclude<NonNullable<Declared['dependsOn']>[number], StreamName>;
type Assert<T extends true> = T;
export type DependenciesDeclared = Assert<[Missing] extends [never] ? true : false>;

/** The streams' dependencies, walked once: the run order and what each set of streams needs. */
export const streamDependencies: StreamGraph<Stream> = streamGraph(declared as readonly Stream[]);

/** Every stream, in the order a first sync runs them. */
export const streams: readonly Stream[] = streamDependencies.order;

/** Every stream's name, in run order: job stream lists and dependencies are checked against it. */
export const STREAM_NAMES: readonly StreamName[] = streams.map((s) => s.name);

export function isStreamName(name: string): name is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(name);
}

export function streamByName(name: string): Stream | undefined {
  return streams.find((s) => s.name === name);
}

/** Each stream's warehouse target, by stream name. */
export const targets = Object.fromEntries(streams.map((s) => [s.name, s.target])) as Record<StreamName, Target>;

/** The targets written besides the streams' own: forms, from the form response list's envelope. */
export const envelopeTargets: readonly Target[] = [forms.formsTarget];

/** The smallest list the service answers: asked for when only its clock (the `Date` header) is wanted. */
export const clockProbe: Endpoint = endpoints.locales;

export function endpointByPath(method: string, path: string): Endpoint | undefined {
  const lower = path.toLowerCase();
  return Object.values(endpoints).find((e) => e.method === method && e.path.toLowerCase() === lower);
}

/** Every column a personal field of the service lands in, one entry per table and column. */
export const personalCatalog: PersonalCatalog = dedupe(
  catalogOf(streams.map((s) => s.target)),
  (c) => `${c.table}.${c.column}`,
);

/**
 * The personal columns of each table (history tables and the copies of a person's fields on other records
 * included, as are the instant and offset beside a date): what a role without personal access must not read.
 */
export function personalColumns(): Record<string, string[]> {
  return personalColumnsByTable(personalCatalog);
}

/** The catalog and the names of the personal fields, as the warehouse's personal-data functions take them. */
export const personalData: PersonalData = {
  catalog: personalCatalog,
  names: PERSONAL_NAMES,
  kinds: FIELD_KINDS,
  targets: { ...targets, ...Object.fromEntries(envelopeTargets.map((t) => [t.table, t])) },
};
