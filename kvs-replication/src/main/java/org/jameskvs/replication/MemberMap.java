package org.jameskvs.replication;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * What each member answered to one mutation: at most a few entries (the copies of one queue),
 * scanned by identity, the first two held in fields: every mutation allocates a few of these, so a
 * HashMap (or even two small arrays each) cost allocation and cache misses on the hot path.
 * Iterates in insertion order.
 */
final class MemberMap<V> extends AbstractMap<Member, V> {
    /** A set of a few members (the members a mutation waits for, ...) over the same layout. */
    static Set<Member> newSet() {
        return new MemberSet();
    }

    // The first two entries inline (a queue has two copies: the usual case allocates no array).
    private Member k0;
    private Member k1;
    private Object v0;
    private Object v1;
    /** Entries from the third on, only while a rebuild adds a member. */
    private Member[] moreKeys;
    private Object[] moreValues;
    private int size;

    @Override
    public V put(Member key, V value) {
        int i = indexOf(key);
        if (i >= 0) {
            V before = valueAt(i);
            setValue(i, value);
            return before;
        }
        if (size >= 2) {
            int j = size - 2;
            if (moreKeys == null) {
                moreKeys = new Member[2];
                moreValues = new Object[2];
            } else if (j == moreKeys.length) {
                moreKeys = Arrays.copyOf(moreKeys, j * 2);
                moreValues = Arrays.copyOf(moreValues, j * 2);
            }
        }
        set(size++, key, value);
        return null;
    }

    /** The {@code i}-th key in insertion order ({@code i < size()}). */
    Member keyAt(int i) {
        return i == 0 ? k0 : i == 1 ? k1 : moreKeys[i - 2];
    }

    /** The {@code i}-th value in insertion order ({@code i < size()}). */
    @SuppressWarnings("unchecked")
    V valueAt(int i) {
        return (V) (i == 0 ? v0 : i == 1 ? v1 : moreValues[i - 2]);
    }

    @Override
    public V get(Object key) {
        int i = indexOf(key);
        return i < 0 ? null : valueAt(i);
    }

    @Override
    public boolean containsKey(Object key) {
        return indexOf(key) >= 0;
    }

    @Override
    public V remove(Object key) {
        int i = indexOf(key);
        if (i < 0) {
            return null;
        }
        V before = valueAt(i);
        removeAt(i);
        return before;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void clear() {
        k0 = k1 = null;
        v0 = v1 = null;
        moreKeys = null;
        moreValues = null;
        size = 0;
    }

    @Override
    public Set<Entry<Member, V>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public int size() {
                return size;
            }

            @Override
            public Iterator<Entry<Member, V>> iterator() {
                return new Iterator<>() {
                    private int next;
                    private int last = -1;

                    @Override
                    public boolean hasNext() {
                        return next < size;
                    }

                    @Override
                    public Entry<Member, V> next() {
                        if (next >= size) {
                            throw new NoSuchElementException();
                        }
                        last = next++;
                        int at = last;
                        return new SimpleEntry<>(keyAt(at), valueAt(at)) {
                            @Override
                            public V setValue(V value) {
                                MemberMap.this.setValue(at, value);
                                return super.setValue(value);
                            }
                        };
                    }

                    @Override
                    public void remove() {
                        if (last < 0) {
                            throw new IllegalStateException();
                        }
                        removeAt(last);
                        next = last;
                        last = -1;
                    }
                };
            }
        };
    }

    private int indexOf(Object key) {
        if (size > 0 && k0 == key) {
            return 0;
        }
        if (size > 1 && k1 == key) {
            return 1;
        }
        for (int i = 2; i < size; i++) {
            if (moreKeys[i - 2] == key) {
                return i;
            }
        }
        return -1;
    }

    private void set(int i, Member key, Object value) {
        switch (i) {
            case 0 -> {
                k0 = key;
                v0 = value;
            }
            case 1 -> {
                k1 = key;
                v1 = value;
            }
            default -> {
                moreKeys[i - 2] = key;
                moreValues[i - 2] = value;
            }
        }
    }

    private void setValue(int i, Object value) {
        set(i, keyAt(i), value);
    }

    private void removeAt(int i) {
        for (int j = i; j < size - 1; j++) {
            set(j, keyAt(j + 1), valueAt(j + 1));
        }
        set(--size, null, null);
    }

    /** The set flavour: members only, same inline layout. */
    private static final class MemberSet extends AbstractSet<Member> {
        private final MemberMap<Boolean> map = new MemberMap<>();

        @Override
        public boolean add(Member m) {
            return map.put(m, Boolean.TRUE) == null;
        }

        @Override
        public boolean remove(Object m) {
            return map.remove(m) != null;
        }

        @Override
        public boolean contains(Object m) {
            return map.containsKey(m);
        }

        @Override
        public boolean isEmpty() {
            return map.size == 0;
        }

        @Override
        public int size() {
            return map.size;
        }

        @Override
        public void clear() {
            map.clear();
        }

        @Override
        public Iterator<Member> iterator() {
            Iterator<Entry<Member, Boolean>> entries = map.entrySet().iterator();
            return new Iterator<>() {
                @Override
                public boolean hasNext() {
                    return entries.hasNext();
                }

                @Override
                public Member next() {
                    return entries.next().getKey();
                }

                @Override
                public void remove() {
                    entries.remove();
                }
            };
        }
    }
}
