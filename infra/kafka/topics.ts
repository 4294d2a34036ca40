/**
 * Topic layout of the Kafka observation bus, and the message key of an observation.
 *
 * Topics are per stream kind, not per observation type: `MediaObserved`,
 * `MediaTranslationObserved` and `SeasonsObserved` all decide the `media-{id}` stream, and ingest
 * refuses a translation of a title it has not registered yet. Kafka orders records only within
 * a partition, so the observations of one stream must share a topic and a key to be decided in
 * the order the crawler saw them; three topics would let a translation overtake its title.
 *
 * The key is the stream the observation targets (the same name ingest routes it to), so every
 * observation of a stream lands in one partition and consumers of a group never race on it.
 */
import { streamOfObservation } from '../../contracts/ids.ts';
import type { ObservationType } from '../../contracts/observations.ts';

/** The topic suffix (after `<prefix>observations.`) of each observation type. */
export const TOPIC_OF_TYPE: Readonly<Record<ObservationType, string>> = {
  MediaObserved: 'media',
  MediaTranslationObserved: 'media',
  SeasonsObserved: 'media',
  AvailabilityObserved: 'availability',
  ProvidersObserved: 'providers',
  GenresObserved: 'genres',
  CollectionObserved: 'collection',
  FeaturedObserved: 'featured',
};

/** Topic suffixes, each once. */
export const OBSERVATION_TOPIC_SUFFIXES: readonly string[] = [...new Set(Object.values(TOPIC_OF_TYPE))];

export const DEAD_LETTER_SUFFIX = 'dead-letter';

export interface TopicNames {
  /** The topic of an observation type, e.g. `marquee.observations.availability`. */
  of(type: ObservationType): string;
  /** Every observation topic (not the dead letters). */
  readonly observations: readonly string[];
  /** `<prefix>observations.dead-letter`. */
  readonly deadLetter: string;
}

export function topicNames(prefix: string): TopicNames {
  const name = (suffix: string) => `${prefix}observations.${suffix}`;
  return {
    of: (type) => name(TOPIC_OF_TYPE[type]),
    observations: OBSERVATION_TOPIC_SUFFIXES.map(name),
    deadLetter: name(DEAD_LETTER_SUFFIX),
  };
}

/** The record key: the stream an observation targets, so a stream stays in one partition. */
export const streamKeyOf = streamOfObservation;

/** `kafka:topic/partition/offset`, the source of a delivered record. */
export function sourceOf(topic: string, partition: number, offset: string): string {
  return `kafka:${topic}/${partition}/${offset}`;
}

/** The parts of a `kafka:topic/partition/offset` source, or null for another transport. */
export function parseSource(source: string): { topic: string; partition: number; offset: string } | null {
  const m = /^kafka:(.+)\/(\d+)\/(\d+)$/.exec(source);
  if (!m) return null;
  return { topic: m[1] as string, partition: Number(m[2]), offset: m[3] as string };
}
