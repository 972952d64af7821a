/** A row id the database can hold: a positive PostgreSQL integer (ids past int4 name no row). */
export const isDbInt = (n: number): boolean => Number.isInteger(n) && n > 0 && n <= 2_147_483_647;
