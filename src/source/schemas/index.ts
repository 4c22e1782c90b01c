export * from './common.ts';
export * from './individual.ts';
export * from './certification.ts';
export * from './scheduling.ts';
export * from './time-off.ts';
export * from './course.ts';
export * from './forms.ts';
export * from './reference.ts';
