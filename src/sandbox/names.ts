/**
 * Word lists for generated people, places and reference lists. Real rosters are not ASCII-only,
 * so the lists include diacritics, apostrophes, hyphens and CJK names on purpose.
 */
export const FIRST_NAMES = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Carlos',
  'Karen',
  'Zoë',
  'José',
  'Łukasz',
  'Chloé',
  'Renée',
  'Søren',
  'Ngọc',
  'Aisha',
  'Dmitri',
  'Priya',
  'Mohammed',
  'Fatima',
  'Hiroshi',
  'Mei',
  'Siobhán',
  'Björn',
  'Ana',
  'Luis',
  'Olga',
  'Kwame',
  'Emily',
  'Daniel',
  'Ashley',
  'Matthew',
  'Amanda',
  'Anthony',
  'Melissa',
  'Mark',
  'Deborah',
  'Steven',
  '伟',
  'Jürgen',
  'François',
  'Anaïs',
  'Nuno',
  'Tomás',
  'Wojciech',
  'Ines',
  'Kai',
  'Leilani',
] as const;

export const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Nuñez',
  "O'Brien",
  'García-López',
  'Müller',
  'Kowalczyk',
  'Nguyễn',
  'Østergaard',
  'Dubois',
  'Papadopoulos',
  'Okafor',
  '王',
  '李',
  'Tanaka',
  'Kim',
  'Patel',
  'Singh',
  'Ivanova',
  'Schmidt',
  'Rossi',
  'MacDonald',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  'St. John',
  'van der Berg',
  'Żółkiewski',
  'Åberg',
  "D'Angelo",
  'Fernández',
  'Çelik',
  'Haddad',
  'Kealoha',
  'Ó Súilleabháin',
] as const;

export const MIDDLE_NAMES = ['A.', 'Lee', 'Marie', 'J.', 'Ann', 'Ray', 'Lynn', 'José', 'Élise', 'K.'] as const;

/** Preferred first names that differ from the legal one. */
export const PREFERRED_NAMES: Readonly<Record<string, string>> = {
  William: 'Bill',
  Robert: 'Bob',
  Elizabeth: 'Liz',
  Richard: 'Rick',
  Jennifer: 'Jen',
  Michael: 'Mike',
  Thomas: 'Tom',
  Patricia: 'Trish',
};

export const STREETS = [
  'Main St',
  'Oak Ave',
  'Maple Dr',
  'Cedar Ln',
  'Elm St',
  'Pine Rd',
  'Lakeview Blvd',
  'Calle Real',
  'Route 9',
  'Hickory Ct',
];
export const CITIES: readonly { city: string; state: string; country: string; zip: string }[] = [
  { city: 'Springfield', state: 'IL', country: 'US', zip: '62701' },
  { city: 'Columbus', state: 'OH', country: 'US', zip: '43004' },
  { city: 'Madison', state: 'WI', country: 'US', zip: '53703' },
  { city: 'Peoria', state: 'IL', country: 'US', zip: '61602' },
  { city: 'Rockford', state: 'IL', country: 'US', zip: '61101' },
  { city: 'Dayton', state: 'OH', country: 'US', zip: '45402' },
  { city: 'Saint-Jérôme', state: 'QC', country: 'CA', zip: 'J7Z 1X6' },
  { city: 'Köln', state: 'NW', country: 'DE', zip: '50667' },
];

/** Certification reference list; `driver` marks driver's license types (the only ones with IsNonDriver). */
export const CERTIFICATIONS: readonly { name: string; issuer: string; years: number | null; driver?: boolean }[] = [
  { name: 'EMT-Basic', issuer: 'State EMS Office', years: 2 },
  { name: 'Paramedic License', issuer: 'State EMS Office', years: 2 },
  { name: 'NREMT Paramedic', issuer: 'National Registry of EMTs', years: 2 },
  { name: 'ACLS', issuer: 'American Heart Association', years: 2 },
  { name: 'PALS', issuer: 'American Heart Association', years: 2 },
  { name: 'BLS CPR', issuer: 'American Heart Association', years: 2 },
  { name: "Driver's License", issuer: 'Department of Motor Vehicles', years: 4, driver: true },
  { name: 'CDL Class B', issuer: 'Department of Motor Vehicles', years: 4, driver: true },
  { name: 'EVOC', issuer: 'Emergency Vehicle Operations', years: 3 },
  { name: 'PHTLS', issuer: 'NAEMT', years: 4 },
  { name: 'Hazmat Awareness', issuer: 'OSHA', years: 1 },
  { name: 'RN License', issuer: 'State Board of Nursing', years: 2 },
  { name: 'CCRN', issuer: 'AACN', years: 3 },
  { name: 'EMD Certification', issuer: 'IAED', years: 2 },
  { name: 'NIMS ICS-100', issuer: 'FEMA', years: null },
  { name: 'NIMS ICS-200', issuer: 'FEMA', years: null },
  { name: 'TB Screening', issuer: 'Occupational Health', years: 1 },
  { name: 'Hepatitis B Vaccination', issuer: 'Occupational Health', years: null },
  { name: 'Influenza Vaccination', issuer: 'Occupational Health', years: 1 },
  { name: 'Firefighter I', issuer: 'State Fire Marshal', years: null },
];

/** Job titles and the certifications (by name) each requires. */
export const JOB_TITLES: readonly { name: string; requires: readonly string[]; shiftWork: boolean }[] = [
  {
    name: 'Paramedic',
    requires: ['Paramedic License', 'ACLS', 'PALS', 'BLS CPR', "Driver's License"],
    shiftWork: true,
  },
  { name: 'EMT', requires: ['EMT-Basic', 'BLS CPR', "Driver's License", 'EVOC'], shiftWork: true },
  { name: 'Advanced EMT', requires: ['EMT-Basic', 'BLS CPR', "Driver's License"], shiftWork: true },
  { name: 'Critical Care Paramedic', requires: ['Paramedic License', 'ACLS', 'PALS', 'CCRN'], shiftWork: true },
  { name: 'Registered Nurse', requires: ['RN License', 'BLS CPR', 'ACLS'], shiftWork: true },
  { name: 'Dispatcher', requires: ['EMD Certification', 'BLS CPR'], shiftWork: true },
  {
    name: 'Field Supervisor',
    requires: ['Paramedic License', 'ACLS', 'NIMS ICS-200', "Driver's License"],
    shiftWork: true,
  },
  { name: 'Wheelchair Van Driver', requires: ['CDL Class B', 'BLS CPR'], shiftWork: true },
  { name: 'Fleet Technician', requires: ["Driver's License"], shiftWork: false },
  { name: 'Billing Specialist', requires: [], shiftWork: false },
  { name: 'Administrative Assistant', requires: [], shiftWork: false },
  { name: 'Medical Director', requires: ['ACLS'], shiftWork: false },
];

export const DEPARTMENTS = [
  'Operations',
  'Communications',
  'Clinical Services',
  'Fleet',
  'Administration',
  'Education',
  'Billing',
] as const;
export const WORK_SHIFTS = ['Days', 'Nights', '24/48 Rotation', 'Weekends', 'Flex'] as const;
export const WORK_STATUSES = ['Full Time', 'Part Time', 'Per Diem', 'Volunteer', 'Seasonal'] as const;

/**
 * Locales (business units) with the fixed UTC offset their times are written in, and the certifications
 * (by name) a locale adds to every job title there.
 */
export const LOCALES: readonly {
  name: string;
  businessUnitId: string | null;
  zone: string;
  requires: readonly string[];
}[] = [
  { name: 'North Station', businessUnitId: 'BU-100', zone: 'America/Chicago', requires: [] },
  { name: 'South Station', businessUnitId: 'BU-200', zone: 'America/Chicago', requires: ['Hazmat Awareness'] },
  { name: 'Riverside Base', businessUnitId: 'BU-300', zone: 'America/New_York', requires: [] },
  { name: 'Airport Post', businessUnitId: null, zone: 'America/Denver', requires: ['TB Screening'] },
  { name: 'Köln Wache', businessUnitId: 'BU-900', zone: 'Europe/Berlin', requires: [] },
];

export const VEHICLES = [
  'Medic 1',
  'Medic 7',
  'Medic 12',
  'Rescue 3',
  'Unit 41',
  'Wheelchair Van 2',
  'Supervisor 1',
] as const;

export const LEAVE_POLICIES: readonly { policy: string; types: readonly string[] }[] = [
  { policy: 'Paid Time Off', types: ['Vacation', 'Personal'] },
  { policy: 'Sick Leave', types: ['Sick', 'Family Sick'] },
  { policy: 'Unpaid Leave', types: ['Unpaid Personal'] },
  { policy: 'Bereavement', types: ['Bereavement'] },
];

export const COURSES: readonly { name: string; description: string; credit: number | null; authors: string }[] = [
  {
    name: 'Airway Management Refresher',
    description: 'Advanced airway review and skills lab',
    credit: 2,
    authors: 'Dr. Ana Rossi',
  },
  {
    name: 'Pediatric Emergencies',
    description: 'Assessment and care of pediatric patients',
    credit: 4,
    authors: 'Dr. Ana Rossi, Mei Tanaka',
  },
  { name: 'Stroke Recognition', description: 'Prehospital stroke scales', credit: 1, authors: 'Kwame Okafor' },
  {
    name: 'Safe Patient Handling',
    description: 'Lifting and moving patients',
    credit: 1.5,
    authors: 'Søren Østergaard',
  },
  {
    name: 'Hazardous Materials Awareness',
    description: 'Annual hazmat awareness',
    credit: null,
    authors: 'OSHA Outreach',
  },
  {
    name: 'Documentation Best Practices',
    description: 'Writing a complete patient care report',
    credit: 0.5,
    authors: 'Renée Dubois',
  },
  {
    name: 'Emergency Vehicle Operations',
    description: 'Defensive driving for emergency vehicles',
    credit: 8,
    authors: 'Fleet Department',
  },
  {
    name: 'Cardiac Arrest Management',
    description: 'High-performance CPR and post-ROSC care',
    credit: 3,
    authors: 'Dr. Ana Rossi, Łukasz Kowalczyk',
  },
];

export const RIDE_ALONG_GUESTS: readonly { first: string; last: string }[] = [
  { first: 'Student', last: 'Observer' },
  { first: 'Zoë', last: 'Nuñez' },
  { first: 'Paul', last: 'Fischer' },
  { first: 'Aiko', last: '王' },
  { first: 'Media', last: 'Guest' },
];

/** Folds a name to the ASCII letters and digits a LogonId or e-mail local part may hold. */
export function asciiFold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[łŁ]/g, 'l')
    .replace(/[øØ]/g, 'o')
    .replace(/[^A-Za-z0-9]/g, '');
}
