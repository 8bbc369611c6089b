#!/usr/bin/python3
"""The random values that the tutorial programs print (steps 2 and 10), computed
independently of jx by the pure-Python reference of JAX's threefry2x32 PRNG,
../shared/reference/threefry_ref.py (written from jax/_src/random/*.py and checked there
against JAX's own known answers), with jax_threefry_partitionable=True, JAX's default.
The expected/*.txt files quote these lines.

Run from the repository root:  /usr/bin/python3 examples/tutorial/gen_expected.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, '..', 'shared', 'reference'))
import threefry_ref as tf  # noqa: E402


def main():
    k0 = tf.seed(0)
    print('# step02_prng')
    print('uniform(PRNGKey(0)) = %.6f' % tf.uniform(k0, 1)[0])
    key, sub = tf.split(k0)
    print('split(PRNGKey(0)): key =', key, 'subkey =', sub)
    key2, sub2 = tf.split(key)
    print('normal(subkey, (3,)) =', ['%.5f' % v for v in tf.normal(sub, 3)])
    print('normal(next subkey, (3,)) =', ['%.5f' % v for v in tf.normal(sub2, 3)])
    print('fold_in(PRNGKey(0), 4) =', tf.fold_in(k0, 4))
    print('split(PRNGKey(0), 5)[4] =', tf.split(k0, 5)[4])
    k1, k2, k3, k4 = tf.split(tf.seed(42), 4)
    print('randint(k1, (5,), 0, 10) =', tf.randint(k1, 5, 0, 10))
    print('permutation(k3, 10) =', tf.permutation(k3, 10))

    print('# step10_data')
    # batches(x, y, 4, epoch_key): the order permutation(epoch_key, 10), epoch keys split
    # from PRNGKey(0) as the program does.
    key = k0
    for epoch in range(2):
        key, epoch_key = tf.split(key)
        print('epoch %d order =' % epoch, tf.permutation(epoch_key, 10))
    # Dataset.shuffle(k): epoch e is permutation(fold_in(k, e), n).
    shuffle_key = tf.seed(1)
    for epoch in range(2):
        print('pipeline epoch %d order =' % epoch, tf.permutation(tf.fold_in(shuffle_key, epoch), 10))


if __name__ == '__main__':
    main()
