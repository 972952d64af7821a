// Each import registers an area's translators and /register sections.
import './realm.js';
import './users.js';
