package org.jameskvs.replication;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * What each member answered to one mutation: at most a few entries (the copies of one queue), so
 * parallel arrays scanned by identity are cheaper than a HashMap, and every request allocates one.
 * Iterates in insertion order.
 */
final class MemberMap<V> extends AbstractMap<Member, V> {
    /** A set of a few members on the same arrays (the members a mutation waits for, ...). */
    static Set<Member> newSet() {
        return Collections.newSetFromMap(new MemberMap<>());
    }

    private Member[] keys = new Member[2];
    private Object[] values = new Object[2];
    private int size;

    @Override
    public V put(Member key, V value) {
        int i = indexOf(key);
        if (i >= 0) {
            V before = value(i);
            values[i] = value;
            return before;
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, size * 2);
            values = Arrays.copyOf(values, size * 2);
        }
        keys[size] = key;
        values[size++] = value;
        return null;
    }

    /** The {@code i}-th key in insertion order ({@code i < size()}). */
    Member keyAt(int i) {
        return keys[i];
    }

    /** The {@code i}-th value in insertion order ({@code i < size()}). */
    V valueAt(int i) {
        return value(i);
    }

    @Override
    public V get(Object key) {
        int i = indexOf(key);
        return i < 0 ? null : value(i);
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
        V before = value(i);
        removeAt(i);
        return before;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public void clear() {
        Arrays.fill(keys, 0, size, null);
        Arrays.fill(values, 0, size, null);
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
                        return new SimpleEntry<>(keys[at], value(at)) {
                            @Override
                            public V setValue(V value) {
                                values[at] = value;
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

    @SuppressWarnings("unchecked")
    private V value(int i) {
        return (V) values[i];
    }

    private int indexOf(Object key) {
        for (int i = 0; i < size; i++) {
            if (keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    private void removeAt(int i) {
        System.arraycopy(keys, i + 1, keys, i, size - i - 1);
        System.arraycopy(values, i + 1, values, i, size - i - 1);
        keys[--size] = null;
        values[size] = null;
    }
}
